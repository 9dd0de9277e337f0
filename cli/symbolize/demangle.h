/* demangle.h - C++ and Rust symbol names for humans. */
#ifndef HI_CLI_DEMANGLE_H
#define HI_CLI_DEMANGLE_H

/* Returns a malloc'ed copy of name, demangled when it is an Itanium C++
 * name or a Rust name (legacy: hash removed; v0), else the name as it is.
 * NULL only when name is NULL or memory runs out. */
char *cli_demangle(const char *name);

#endif /* HI_CLI_DEMANGLE_H */
