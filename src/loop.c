/* Creating runs: files, DB, git, in that order. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "search/confkey.h"
#include "lib/fsutil.h"
#include "gitops.h"
#include "jobsh/jobsh.h"
#include "loop.h"
#include "jobsh/secrets.h"
#include "jobs/steps.h"
#include "study.h"
#include "tags.h"
#include "search/taken.h"

/* Check a tag for a new run. */
int loop_check_new_tag(struct xl_ctx *ctx, const char *tag, char **cause)
{
	struct run r;
	char *dir;
	int rc;

	if (!valid_name(tag)) {
		*cause = xasprintf("invalid tag '%s': use 1 to 64 letters, digits, '.', "
				   "'_' or '-', starting with a letter or digit", tag);
		return XL_USAGE;
	}
	rc = runs_get(&ctx->db, ctx->cfg.study, tag, &r);
	if (rc < 0)
		return XL_ERR;
	if (rc == 0) {
		run_release(&r);
		*cause = xasprintf("run '%s' already exists in study '%s'", tag,
				   ctx->cfg.study);
		return XL_DATAERR;
	}
	dir = run_dir(ctx->root, ctx->cfg.study, tag);
	rc = path_exists(dir);
	if (rc)
		*cause = xasprintf("'%s' already exists (not created by xloop?); "
				   "choose another tag", dir);
	free(dir);
	return rc ? XL_DATAERR : 0;
}

/* "the comparison is not one change: ..." when the code differs from the parent's, or NULL. */
char *loop_code_note(struct xl_ctx *ctx, long long attempt_id)
{
	char mine[41], mine_ch[65], theirs[41], theirs_ch[65], *cause = NULL;
	int differs = 0;

	if (attempts_code(&ctx->db, attempt_id, 0, mine, mine_ch) != 1 ||
	    attempts_code(&ctx->db, attempt_id, 1, theirs, theirs_ch) != 1)
		return NULL;	/* not pinned (adopted, older, no repo): nothing to say */
	if (gitops_code_differs(ctx->root, theirs, mine, &differs, &cause) != 0) {
		free(cause);
		return NULL;
	}
	if (differs && strcmp(mine_ch, theirs_ch) != 0)
		return xasprintf("the comparison is not one change: code changed since the "
				 "parent (commit %.12s, then %.12s, and their uncommitted changes "
				 "differ)", theirs, mine);
	if (differs)
		return xasprintf("the comparison is not one change: code changed since the "
				 "parent (commit %.12s, then %.12s)", theirs, mine);
	if (strcmp(mine_ch, theirs_ch) != 0)
		return xasprintf("the comparison is not one change: code changed since the "
				 "parent (uncommitted changes to tracked files %s)", !*mine_ch ?
				 "were undone" : !*theirs_ch ? "were made" : "differ");
	return NULL;
}

/* 1 when the run's latest attempt succeeded. */
int loop_run_proven(struct xl_ctx *ctx, const struct run *r)
{
	struct attempt a;
	int proven;

	if (attempts_latest(&ctx->db, r->id, &a) != 0)
		return 0;
	proven = strcmp(a.verdict, "success") == 0;
	attempt_release(&a);
	return proven;
}

/* Look a run up by tag or "best". */
int loop_find_run(struct xl_ctx *ctx, const char *tag, struct run *r, char **cause)
{
	int rc;

	if (strcmp(tag, "best") == 0) {
		rc = best_get(ctx, r, NULL);
		if (rc == 1)
			*cause = xasprintf("study '%s' has no proven run yet, so there is no "
					   "best: name a parent tag (and --force if it is "
					   "not proven)", ctx->cfg.study);
	} else {
		rc = runs_get(&ctx->db, ctx->cfg.study, tag, r);
		if (rc == 1)
			*cause = xasprintf("no run '%s' in study '%s' ('xloop status' "
					   "lists them)", tag, ctx->cfg.study);
	}
	return rc == 0 ? 0 : rc == 1 ? XL_NOINPUT : XL_ERR;
}

/* The parent of new runs: a run (or the best), proven unless force. */
int loop_find_parent(struct xl_ctx *ctx, const char *from, int force, struct run *r,
		     char **cause)
{
	int rc = loop_find_run(ctx, from, r, cause);

	if (rc == 0 && !force && !loop_run_proven(ctx, r)) {
		*cause = xasprintf("parent '%s' is not proven (its latest attempt did not "
				   "succeed); pass --force to branch from it anyway", r->tag);
		run_release(r);
		rc = XL_DATAERR;
	}
	return rc;
}

/* Remove the step scripts a creation wrote (NAME.sh, and their temporaries). */
static void undo_steps(const char *dir)
{
	DIR *dh = opendir(dir);
	struct dirent *de;

	while (dh && (de = readdir(dh))) {
		size_t n = strlen(de->d_name);
		const char *tmp = strstr(de->d_name, ".sh.tmp-");
		char *name = tmp ? xstrndup(de->d_name, (size_t)(tmp - de->d_name)) :
			n > 3 && strcmp(de->d_name + n - 3, ".sh") == 0 ?
			xstrndup(de->d_name, n - 3) : NULL;

		if (name && steps_valid_name(name)) {
			char *p = path_join(dir, de->d_name);

			unlink(p);
			free(p);
		}
		free(name);
	}
	if (dh)
		closedir(dh);
}

/* Remove what a failed creation left (only files it created). */
static void undo_files(const char *dir)
{
	char *p;

	undo_steps(dir);
	p = path_join(dir, "job.sh");
	unlink(p);
	free(p);
	p = path_join(dir, "cv.json");
	unlink(p);
	free(p);
	p = path_join(dir, "slurm");
	rmdir(p);
	free(p);
	rmdir(dir);
}

/* Remove what a creation of tag that a crash cut off left (only its own files). */
void loop_clear_leftover(struct xl_ctx *ctx, const char *tag)
{
	char *dir = run_dir(ctx->root, ctx->cfg.study, tag);
	DIR *dh = opendir(dir);
	struct dirent *de;

	/* write_file_atomic's temporary job.sh.tmp-XXXXXX */
	while (dh && (de = readdir(dh)))
		if (starts_with(de->d_name, "job.sh.tmp-")) {
			char *p = path_join(dir, de->d_name);

			unlink(p);
			free(p);
		}
	if (dh)
		closedir(dh);
	undo_files(dir);
	free(dir);
}

static int make_run_dirs(const char *root, const char *study, const char *dir,
			 char **cause)
{
	char *runs = path_join(root, "runs"), *sdir = path_join(runs, study);
	char *slurm = path_join(dir, "slurm");
	int rc = make_dir(runs, 0755, cause);

	if (rc == 0)
		rc = make_dir(sdir, 0755, cause);
	if (rc == 0 && mkdir(dir, 0755) < 0) {
		*cause = xasprintf("unable to create '%s': %s", dir, strerror(errno));
		rc = -1;
	}
	if (rc == 0 && make_dir(slurm, 0755, cause) < 0) {
		rmdir(dir);
		rc = -1;
	}
	free(runs);
	free(sdir);
	free(slurm);
	return rc;
}

/* Record the commit that holds a run's job.sh. */
static void set_commit(struct xl_ctx *ctx, long long run_id, const char *oid)
{
	struct stmt q;

	if (db_prepare(&ctx->db, &q, "UPDATE run SET commit_id = :c WHERE id = :id") == 0) {
		db_bind_text(&q, ":c", oid);
		db_bind_int64(&q, ":id", run_id);
		db_step(&q);
		db_finalize(&q);
	}
}

static int new_run(struct xl_ctx *ctx, const char *tag, const char *from,
		   const char *var, const char *value, const char *note, int force,
		   const char *segments, const struct loop_decision *dec, struct new_run *out,
		   char **cause);

/* Create a run: files, DB row, commit. */
int loop_create_run(struct xl_ctx *ctx, struct run *r, const char *text,
		    size_t len, const char *cv_src, double cv_score, char **cause)
{
	const char *study = ctx->cfg.study;
	char *dir = run_dir(ctx->root, study, r->tag);
	char *job = path_join(dir, "job.sh"), *rel[STEPS_MAX + 2], *msg = NULL;
	size_t i, nrel = 0;
	struct buf cv = BUF_INIT;
	char oid[41], token[27];
	struct secret_hit secret;
	int rc = XL_ERR, err, has_secret;

	if (cv_src && read_file(cv_src, CV_MAX_BYTES, &cv, &err, cause) < 0) {
		rc = err == ENOENT ? XL_NOINPUT : XL_DATAERR;
		goto out;
	}
	/* job.sh goes into git: a token written into it would be published */
	has_secret = secrets_scan(text, &secret) > 0;
	for (i = 1; !has_secret && r->steps && i < r->steps->nr; i++)
		has_secret = secrets_scan(r->steps->texts[i].s, &secret) > 0;
	if (has_secret) {
		if (!ctx->allow_secret) {
			*cause = xasprintf("job.sh line %d holds what looks like %s; git would "
					   "publish it. Read it at run time instead, from the "
					   "environment (\"$HF_TOKEN\") or a 0600 file "
					   "(\"$(cat ~/.config/hf_token)\"). --allow-secret "
					   "commits it anyway", secret.line, secret.what);
			rc = XL_DATAERR;
			goto out;
		}
		warning("COMMITTING A SECRET: job.sh line %d holds what looks like %s "
			"(--allow-secret); it is in git history from now on", secret.line,
			secret.what);
	}
	if (make_run_dirs(ctx->root, study, dir, cause) < 0)
		goto out;
	if (write_file_atomic(job, text, len, 0755, cause) < 0)
		goto undo;
	for (i = 1; r->steps && i < r->steps->nr; i++) {
		char *sp = step_path(ctx->root, study, r->tag, r->steps->names[i]);
		int w = write_file_atomic(sp, r->steps->texts[i].s, r->steps->texts[i].len,
					  0755, cause);

		free(sp);
		if (w < 0)
			goto undo;
	}
	if (cv_src) {
		char *cvp = path_join(dir, "cv.json");
		int w = write_file_atomic(cvp, cv.s, cv.len, 0644, cause);

		free(cvp);
		if (w < 0)
			goto undo;
	}
	crash_point("create-after-files");	/* the files are there, the DB does not know */
	if (db_begin_write(&ctx->db) < 0) {
		*cause = xasprintf("the state DB is busy; try again");
		rc = XL_TEMPFAIL;
		goto undo;
	}
	if (r->config == NULL || !*r->config) {
		char key[65], *why = NULL;

		free(r->config);
		free(r->config_key);
		r->config = NULL;
		r->config_key = NULL;
		if ((r->steps ? steps_config(r->steps, &r->config, &why) :
		     confkey_config(text, len, &r->config, &why)) == 0) {
			confkey_key(r->config, ctx->cfg.search.seed, key);
			r->config_key = xstrdup(key);
		}
		free(why);
	}
	/* cleared by loop_commit_repair once the job.sh is in git, whatever kills us */
	if (runs_insert(&ctx->db, r) < 0 || db_kv_set(&ctx->db, "git.uncommitted", 1) < 0 ||
	    (r->steps && steps_insert(&ctx->db, r->id, r->steps) < 0))
		goto rollback;
	if (has_secret) {
		char *d = xasprintf("job.sh line %d holds what looks like %s; committed "
				    "with --allow-secret", secret.line, secret.what);
		int bad = loop_event(ctx, "secret-allowed", r->id, 0, d) < 0;

		free(d);
		if (bad)
			goto rollback;
	}
	if (cv_src) {
		struct attempt a;

		memset(&a, 0, sizeof(a));
		study_token(token);
		a.run_id = r->id;
		a.n = 0;
		a.token = token;
		a.phase = "adopted";
		a.log_path = "";
		a.intent_at = time(NULL);
		a.verdict = "success";
		a.verdict_reason = "adopted with a hand-run cv.json";
		a.has_score = 1;
		a.score = cv_score;
		if (attempts_insert(&ctx->db, &a) < 0)
			goto rollback;
	}
	if (db_commit(&ctx->db) < 0) {
		*cause = xasprintf("unable to record run '%s' in the state DB", r->tag);
		goto undo;
	}

	/* the run exists now; git is the record, not the truth */
	rel[nrel++] = xasprintf("runs/%s/%s/job.sh", study, r->tag);
	for (i = 1; r->steps && i < r->steps->nr; i++)
		rel[nrel++] = xasprintf("runs/%s/%s/%s.sh", study, r->tag, r->steps->names[i]);
	if (cv_src)	/* the proof of a proven run goes with it */
		rel[nrel++] = xasprintf("runs/%s/%s/cv.json", study, r->tag);
	if (r->parent_id)
		msg = xasprintf("xloop: new %s/%s from %s: %s\n\nOne change: %s=%s "
				"(was %s).%s%s\n", study, r->tag, r->parent_tag, r->var,
				r->var, r->new_value, r->old_value,
				r->note && *r->note ? "\n\n" : "", r->note ? r->note : "");
	else
		msg = xasprintf("xloop: adopt %s/%s\n", study, r->tag);
	if (r->parent_id && r->segments) {
		char *m = xasprintf("%s\nSegments: up to %s (--segments), for every submission "
				    "that does not say otherwise.\n", msg, r->segments);

		free(msg);
		msg = m;
	}
	if (has_secret) {
		char *m = xasprintf("%s\nWARNING: committed with --allow-secret: line %d "
				    "holds what looks like %s.\n", msg, secret.line, secret.what);

		free(msg);
		msg = m;
	}
	/* the decision that made it goes into the same commit (one commit a run) */
	if (r->decision && loop_decisions_append(ctx, &r->decision->entry, &r->decision->once, 1,
					    cause) == 0) {
		char *m = xasprintf("%s\n%s", r->decision->msg, msg);

		free(msg);
		msg = m;
		rel[nrel++] = xstrdup("ops/decisions.md");
	} else if (r->decision) {
		warning("run '%s' was created, but ops/decisions.md was not updated: %s",
			r->tag, *cause);
		FREE_AND_NULL(*cause);
	}
	if (loop_commit(ctx, (const char *const *)rel, nrel, msg, oid, cause) < 0) {
		warning("run '%s' was created but not committed: %s (committed "
			"by a later call once git lets it)", r->tag, *cause);
		FREE_AND_NULL(*cause);
	} else if (*oid) {
		set_commit(ctx, r->id, oid);
		free(r->commit_id);
		r->commit_id = xstrdup(oid);
	}
	rc = XL_OK;
	goto out;
rollback:
	db_rollback(&ctx->db);
	if (*cause == NULL)
		*cause = xasprintf("unable to record run '%s' in the state DB", r->tag);
undo:
	undo_files(dir);
out:
	buf_release(&cv);
	for (i = 0; i < nrel; i++)
		free(rel[i]);
	free(msg);
	free(job);
	free(dir);
	return rc;
}

/* Free what loop_new_run made. */
void new_run_release(struct new_run *nr)
{
	run_release(&nr->run);
	free(nr->new_text);
	free(nr->old_raw);
	memset(nr, 0, sizeof(*nr));
}

/* Warn when the parent's script names its own run literally. */
static void warn_literal_paths(struct xl_ctx *ctx, const struct run *parent,
			       const char *text)
{
	char *dir = run_dir(ctx->root, ctx->cfg.study, parent->tag);
	char *rel = xasprintf("runs/%s/%s", ctx->cfg.study, parent->tag);
	int line;

	if (jobsh_mentions(text, dir, &line) || jobsh_mentions(text, rel, &line))
		warning("the parent's job.sh names its own run directory on line %d; "
			"use \"$XLOOP_RUN_DIR\" instead, or the new run will write "
			"into the parent's directory", line);
	free(dir);
	free(rel);
}

/* Make a one-change run. */
int loop_new_run(struct xl_ctx *ctx, const char *tag, const char *from,
		 const char *var, const char *value, const char *note, int force,
		 struct new_run *out, char **cause)
{
	return loop_new_run_with(ctx, tag, from, var, value, note, force, NULL, out, cause);
}

/* Make a one-change run with its own segment count. */
int loop_new_run_with(struct xl_ctx *ctx, const char *tag, const char *from,
		      const char *var, const char *value, const char *note, int force,
		      const char *segments, struct new_run *out, char **cause)
{
	return new_run(ctx, tag, from, var, value, note, force, segments, NULL, out, cause);
}

/* Make a one-change run whose decision entry goes into its commit. */
int loop_new_run_decided(struct xl_ctx *ctx, const char *tag, const char *from,
			 const char *var, const char *value, const char *note,
			 const struct loop_decision *dec, struct new_run *out, char **cause)
{
	return new_run(ctx, tag, from, var, value, note, 0, NULL, dec, out, cause);
}

/* loop_new_run_with, and the decision (NULL: none) committed with the run. */
static int new_run(struct xl_ctx *ctx, const char *tag, const char *from,
		   const char *var, const char *value, const char *note, int force,
		   const char *segments, const struct loop_decision *dec, struct new_run *out,
		   char **cause)
{
	struct buf nt = BUF_INIT;
	struct jobsh_change ch = JOBSH_CHANGE_INIT;
	struct step_set set;
	struct run parent;
	const char *old, *ppath;
	char *what = NULL;
	size_t h, i;
	int rc;

	memset(out, 0, sizeof(*out));
	step_set_init(&set);
	rc = loop_check_new_tag(ctx, tag, cause);
	if (rc)
		return rc;
	rc = loop_find_parent(ctx, from, force, &parent, cause);
	if (rc)
		return rc;
	/* every step is copied; the one that assigns var changes */
	rc = steps_read(&ctx->db, ctx->root, ctx->cfg.study, parent.id, parent.tag, &set,
			cause);
	if (rc)
		goto out;
	h = steps_holder(&set, var);
	ppath = set.paths[h];
	if (jobsh_rewrite(set.texts[h].s, set.texts[h].len, var, value, &nt, &ch, cause) < 0) {
		char *c = xasprintf("cannot change %s in %s: %s", var, ppath, *cause);

		free(*cause);
		*cause = c;
		rc = XL_DATAERR;
		goto out;
	}
	what = h ? xasprintf("the new %s.sh", set.names[h]) : xstrdup("the new job.sh");
	if (study_bash_syntax(what, nt.s, cause) < 0) {
		rc = XL_DATAERR;
		goto out;
	}
	for (i = 0; i < set.nr; i++)
		warn_literal_paths(ctx, &parent, set.texts[i].s);
	buf_release(&set.texts[h]);
	set.texts[h] = nt;
	buf_init(&nt);
	out->run.study = xstrdup(ctx->cfg.study);
	out->run.tag = xstrdup(tag);
	out->run.parent_id = parent.id;
	out->run.parent_tag = xstrdup(parent.tag);
	out->run.var = xstrdup(var);
	old = ch.old_value ? ch.old_value : ch.old_raw;
	out->run.old_value = utf8_clean(old, strlen(old));	/* shown, never used */
	out->run.new_value = xstrdup(value);
	out->run.note = xstrdup(note ? note : "");
	out->run.segments = segments;
	out->run.steps = set.nr > 1 ? &set : NULL;
	out->run.decision = dec;
	rc = loop_create_run(ctx, &out->run, set.texts[0].s, set.texts[0].len, NULL, 0, cause);
	out->run.segments = NULL;	/* borrowed */
	out->run.steps = NULL;
	out->run.decision = NULL;
	if (rc) {
		run_release(&out->run);
		goto out;
	}
	out->line = ch.line;
	out->new_text = xstrdup(ch.new_text);
	out->old_raw = xstrdup(ch.old_raw);
out:
	run_release(&parent);
	jobsh_change_release(&ch);
	step_set_release(&set);
	buf_release(&nt);
	free(what);
	return rc;
}

/* Refuse a change `new` would refuse, or a configuration taken already. */
int loop_check_change(struct xl_ctx *ctx, const struct run *parent, const char *var,
		      const char *value, int flags, long long skip_plan, char **cause)
{
	struct jobsh_vars vars = JOBSH_VARS_INIT;
	const struct jobsh_var *jv;
	struct step_set set;
	char *quoted;
	size_t h;
	int rc, same;

	rc = steps_read(&ctx->db, ctx->root, ctx->cfg.study, parent->id, parent->tag, &set,
			cause);
	if (rc)
		return rc;
	rc = XL_DATAERR;
	h = steps_holder(&set, var);
	if (jobsh_scan(set.texts[h].s, set.texts[h].len, &vars, cause) < 0 ||
	    jobsh_find(&vars, var, &jv, cause) < 0) {
		char *c = xasprintf("%s (in %s's %s.sh)", *cause, parent->tag,
				    h ? set.names[h] : "job");

		free(*cause);
		*cause = c;
		goto out;
	}
	quoted = jobsh_quote(value);
	same = jv->value ? value_same(jv->value, value) : strcmp(jv->raw, quoted) == 0;
	free(quoted);
	if (same) {
		*cause = xasprintf("%s is %s in %s's %s.sh already: the run would change "
				   "nothing", var, jv->raw, parent->tag, h ? set.names[h] : "job");
		goto out;
	}
	rc = taken_check(ctx, parent, var, value, flags, skip_plan, cause);
out:
	jobsh_vars_release(&vars);
	step_set_release(&set);
	return rc;
}

/* loop_check_change from the parent from names ("best" allowed; proven). */
int loop_check_from(struct xl_ctx *ctx, const char *from, const char *var,
		    const char *value, int flags, char **cause)
{
	struct run parent;
	int rc = loop_find_parent(ctx, from, 0, &parent, cause);

	if (rc)
		return rc;
	rc = loop_check_change(ctx, &parent, var, value, flags, 0, cause);
	run_release(&parent);
	return rc;
}

/* Whether ops/decisions.md (at path) differs from HEAD's. */
static int decisions_uncommitted(struct xl_ctx *ctx, const char *path)
{
	struct buf b = BUF_INIT;
	char *cause = NULL;
	int err, rc = 0;

	if (read_file(path, 64 << 20, &b, &err, &cause) == 0)
		rc = loop_matches_head(ctx, "ops/decisions.md", b.s, b.len, &cause) == 0;
	free(cause);
	buf_release(&b);
	return rc;
}

/* Commit the job.sh of runs whose commit failed or a crash cut off. */
void loop_commit_repair(struct xl_ctx *ctx)
{
	char *prefix, **rel = NULL, *msg, *cause = NULL, *dec, oid[41];
	long long *ids = NULL;
	size_t n = 0, i;
	struct stmt q;
	int with_dec;

	if (db_kv_get(&ctx->db, "git.uncommitted") == 0)
		return;
	prefix = loop_worktree_prefix(ctx->root);
	if (prefix && db_prepare(&ctx->db, &q, "SELECT id, tag FROM run WHERE study = :study"
				 " AND coalesce(commit_id, '') = '' ORDER BY id") == 0) {
		db_bind_text(&q, ":study", ctx->cfg.study);
		while (db_step(&q) == SQLITE_ROW) {
			char *job = xasprintf("runs/%s/%s/job.sh", ctx->cfg.study,
					      db_col_text(&q, 1));
			char *abs = path_join(ctx->root, job);

			if (path_exists(abs)) {
				char *names[STEPS_MAX];
				size_t k, ns = 0;

				ids = xreallocarray(ids, n + 1, sizeof(*ids));
				rel = xreallocarray(rel, n + 1, sizeof(*rel));
				ids[n] = db_col_int64(&q, 0);
				rel[n++] = job;
				/* its step scripts go along (ids[] is one per run: 0 for these) */
				if (steps_names(&ctx->db, ids[n - 1], names, &ns) < 0)
					ns = 0;
				for (k = 0; k < ns; k++) {
					ids = xreallocarray(ids, n + 1, sizeof(*ids));
					rel = xreallocarray(rel, n + 1, sizeof(*rel));
					ids[n] = 0;
					rel[n++] = xasprintf("runs/%s/%s/%s.sh", ctx->cfg.study,
							     db_col_text(&q, 1), names[k]);
					free(names[k]);
				}
			} else {
				free(job);
			}
			free(abs);
		}
		db_finalize(&q);
	}
	/* the decisions of the same crash go along (the file holds them) */
	rel = xreallocarray(rel, n + 1, sizeof(*rel));
	rel[n] = xstrdup("ops/decisions.md");
	dec = path_join(ctx->root, rel[n]);
	with_dec = prefix && decisions_uncommitted(ctx, dec);
	free(dec);
	msg = xasprintf("xloop: commit what a crash or a locked git left uncommitted "
			"(%zu run%s%s)\n", n, n == 1 ? "" : "s",
			with_dec ? ", ops/decisions.md" : "");
	if (!prefix || n + (size_t)with_dec == 0) {
		db_kv_set(&ctx->db, "git.uncommitted", 0);	/* no git, or nothing left */
	} else if (loop_commit(ctx, (const char *const *)rel,
			       n + (size_t)with_dec, msg, oid, &cause) < 0) {
		warning("%zu run%s%s not committed yet: %s", n, n == 1 ? "" : "s",
			with_dec ? " and decisions" : "", cause);
	} else if (*oid && db_begin_write(&ctx->db) == 0) {
		for (i = 0; i < n; i++)
			if (ids[i])
				set_commit(ctx, ids[i], oid);
		db_kv_set(&ctx->db, "git.uncommitted", 0);
		db_commit(&ctx->db);
	}
	for (i = 0; i <= n; i++)
		free(rel[i]);
	free(rel);
	free(ids);
	free(msg);
	free(cause);
	free(prefix);
}
