/* Functions that are too easy to misuse; use buf_* or xsnprintf instead. */
#ifndef XLOOP_BANNED_H
#define XLOOP_BANNED_H

#define BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) BANNED(strcpy)
#undef strcat
#define strcat(x, y) BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) BANNED(strncpy)
#undef sprintf
#define sprintf(...) BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) BANNED(vsprintf)
#undef strtok
#define strtok(x, y) BANNED(strtok)
#undef atoi
#define atoi(x) BANNED(atoi)
#undef localtime
#define localtime(x) BANNED(localtime)
#undef gmtime
#define gmtime(x) BANNED(gmtime)

#endif
