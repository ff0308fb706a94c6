/* strdistinct.h -- the distinct strings of a list, in first-seen order, in
 * O(n log n) (a report over 20,000 problems must not compare every pair). */
#ifndef GPUORCH_STRDISTINCT_H
#define GPUORCH_STRDISTINCT_H

/* Keeps the first occurrence of each string of names[0..n-1] (none NULL),
 * in their order, at the front of names; returns how many there are. */
int str_distinct(const char **names, int n);

#endif
