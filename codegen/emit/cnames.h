/*
** cnames.h: safe C spellings for the names of a .stn program (cnames.c
** says which names are avoided and how).
*/
#ifndef STN_CNAMES_H
#define STN_CNAMES_H

#include <stdbool.h>

/* Whether name could clash with C, C++, CUDA, libc, PETSc or our own names. */
bool cname_reserved(const char *name);
/* Gives each of the n names in user a C name (malloc'd, into out): the same
   spelling when safe, else with trailing underscores; all distinct. */
void cname_assign(const char *const *user, int n, char **out);
/* The first entry of the reserved table that is out of order, or NULL. */
const char *cname_check_table(void);

#endif
