/* banned.h -- functions gpuorch must not use (after git's banned.h).
 * Included last by every .c file through the Makefile's -include flag. */
#ifndef GPUORCH_BANNED_H
#define GPUORCH_BANNED_H

#define BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) BANNED(strcpy)
#undef strcat
#define strcat(x, y) BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) BANNED(strncpy)
#undef strncat
#define strncat(x, y, n) BANNED(strncat)
#undef sprintf
#define sprintf(...) BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) BANNED(vsprintf)
#undef strtok
#define strtok(x, y) BANNED(strtok)
#undef gmtime
#define gmtime(t) BANNED(gmtime)
#undef localtime
#define localtime(t) BANNED(localtime)
#undef ctime
#define ctime(t) BANNED(ctime)
#undef asctime
#define asctime(t) BANNED(asctime)
/* the locale stays "C": core/localeconv.c answers for it */
#undef setlocale
#define setlocale(c, l) BANNED(setlocale)
#undef system
#define system(c) BANNED(system)

#endif
