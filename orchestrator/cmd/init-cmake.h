/* init-cmake.h -- the executables of a CMake project, for `gpuorch init`
 * (init-cmake.c): asked of CMake's file API, else scanned from the
 * CMakeLists.txt files git tracks. */
#ifndef GPUORCH_INIT_CMAKE_H
#define GPUORCH_INIT_CMAKE_H

struct init_cmake {
	char **names; /* the executables, NULL-terminated */
	char **paths; /* each one's file relative to the tree: build/src/app */
	int n;
	char *how;    /* how they were found (or why none was), one line */
};

/* The executables (at most max) of the CMake project at root, files being
 * the files git tracks there (NULL-terminated). Never fails: none found is
 * n == 0, with how saying why. The timeout of cmake's configure is
 * GPUORCH_INIT_CMAKE_TIMEOUT_S seconds (default 120). */
void init_cmake_find(const char *root, char *const *files, int max, struct init_cmake *c);
void init_cmake_release(struct init_cmake *c);

#endif
