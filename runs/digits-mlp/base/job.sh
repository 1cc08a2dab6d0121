#!/bin/bash
# The example study's network: a small PyTorch MLP (64 -> HIDDEN -> 10,
# ReLU, SGD with momentum) on scikit-learn's bundled digits, on the CPU
# (Debian's python3-torch), a second or two of training a run. It follows
# xloop's log contract (START, a line per epoch, FINISHED or FAILED) and
# reports as it trains (xloop help adopt: progress and early stop): "epochs
# N" and "chance 0.1" (ten classes), then "epoch K ACCURACY" after each
# epoch in $XLOOP_RUN_DIR/progress, the validation accuracy, or nan once
# the training loss is not finite (a diverged network's accuracy means
# nothing; LR=1e10 does that at the first epoch). When xloop's stop watcher
# writes $XLOOP_RUN_DIR/stopped it writes cv.json with its last accuracy and
# exits. It saves a checkpoint after every epoch ($XLOOP_RUN_DIR/checkpoint,
# xloop.json's segments.checkpoint) and goes on from it in a later segment
# or after a requeue of the same attempt, counting its own epochs; Slurm's
# signal before the time limit (segments.signal, USR2, forwarded below as
# the log contract says) makes it exit 85 (continue me) at the epoch's end.
# xloop changes exactly one of the assignments below per run; SEED only
# changes the initial weights and the batches' order (the validation split
# is the same for every run).
set -uo pipefail
LR=0.2
HIDDEN=32
EPOCHS=8
BATCH=64
SEED=0
trap 'kill -USR2 "$child" 2>/dev/null; got=1' USR2
python3 - "$LR" "$HIDDEN" "$EPOCHS" "$BATCH" "$SEED" <<'PY' & child=$!
import json, math, os, signal, sys, time

lr, hidden, epochs, batch, seed = (float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]),
                                   int(sys.argv[4]), int(sys.argv[5]))
run_dir = os.environ["XLOOP_RUN_DIR"]
attempt = os.environ.get("XLOOP_ATTEMPT", "1")
progress = os.path.join(run_dir, "progress")
stop_file = os.path.join(run_dir, "stopped")
ckpt = os.path.join(run_dir, "checkpoint")
go_on = False  # Slurm's signal before the time limit: save, then exit 85


def on_signal(signum, frame):
    global go_on
    go_on = True


def report(line):
    with open(progress, "a") as f:
        f.write(line + "\n")


signal.signal(signal.SIGUSR2, on_signal)
try:
    import torch
    from sklearn.datasets import load_digits

    torch.set_num_threads(1)
    print(f"START model=mlp lr={lr:g} hidden={hidden} epochs={epochs} batch={batch} "
          f"seed={seed} device=cpu torch={torch.__version__} "
          f"run_id={os.environ.get('XLOOP_RUN_ID', '')}", flush=True)
    X, y = load_digits(return_X_y=True)
    X = torch.tensor(X / 16.0, dtype=torch.float32)
    y = torch.tensor(y)
    split = torch.randperm(len(y), generator=torch.Generator().manual_seed(0))
    val, train = split[:360], split[360:]
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(64, hidden), torch.nn.ReLU(),
                                torch.nn.Linear(hidden, 10))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    order_gen = torch.Generator().manual_seed(seed)
    start, last = 1, None
    if os.path.exists(ckpt):
        state = torch.load(ckpt)
        if state["attempt"] == attempt:  # a later segment or a requeue: go on
            model.load_state_dict(state["model"])
            opt.load_state_dict(state["opt"])
            order_gen.set_state(state["order"])
            start, last = state["epoch"] + 1, state["last"]
            print(f"resumed from the checkpoint of epoch {state['epoch']}", flush=True)
    if start == 1:
        report(f"epochs {epochs}")
        report("chance 0.1")
    for epoch in range(start, epochs + 1):
        t0 = time.time()
        model.train()
        order = train[torch.randperm(len(train), generator=order_gen)]
        total = 0.0
        for i in range(0, len(order), batch):
            b = order[i:i + batch]
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(X[b]), y[b])
            loss.backward()
            opt.step()
            total += loss.item() * len(b)
        loss = total / len(order)
        model.eval()
        with torch.no_grad():
            acc = (model(X[val]).argmax(1) == y[val]).float().mean().item()
        value = acc if math.isfinite(loss) else float("nan")
        if math.isfinite(value):
            last = value
        print(f"epoch {epoch}/{epochs} loss={loss:.4f} val_acc={acc:.4f} "
              f"{time.time() - t0:.2f}s", flush=True)
        torch.save({"attempt": attempt, "epoch": epoch, "last": last,
                    "model": model.state_dict(), "opt": opt.state_dict(),
                    "order": order_gen.get_state()}, ckpt + ".tmp")
        os.replace(ckpt + ".tmp", ckpt)
        report(f"epoch {epoch} {value:.6f}")
        # (the end of an epoch)
        if os.path.exists(stop_file):
            with open(stop_file) as f:
                print(f"STOPPED by xloop after epoch {epoch}: {f.read().strip()}", flush=True)
            break
        if go_on and epoch < epochs:
            print(f"CONTINUE after epoch {epoch}: the checkpoint is saved", flush=True)
            sys.exit(85)
    if last is None:
        # no finite accuracy: nothing to write
        print("FAILED the training loss was never finite", flush=True)
        sys.exit(0 if os.path.exists(stop_file) else 1)
except Exception as e:
    print(f"FAILED {type(e).__name__}: {e}", flush=True)
    sys.exit(1)
with open(os.path.join(run_dir, "cv.json"), "w") as f:
    json.dump({"score": last, "metric": "accuracy", "epochs": epoch}, f)
print(f"FINISHED val_accuracy={last:.4f}", flush=True)
PY
wait "$child"; rc=$?
if [ "$rc" -gt 128 ] && [ -n "${got:-}" ]; then wait "$child"; rc=$?; fi
exit "$rc"
