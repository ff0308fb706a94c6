/* main.c -- placeholder until the command table lands */
#include "error.h"
#include "banned.h"
int main(void) { return 0; }
