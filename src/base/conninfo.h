/*
 * conninfo.h
 *		The registry's connection string (idgen.node_registry): what the
 *		setting accepts, and what messages show of it.
 */
#ifndef IDGEN_CONNINFO_H
#define IDGEN_CONNINFO_H

#include "utils/guc.h"

#define CONNINFO_PASSWORD_HINT \
	"Put the password in ~/.pgpass of the operating-system user that runs the server, or in a password file named by the connection string's passfile or by PGPASSFILE."

extern bool conninfo_has_password(const char *conninfo);
extern char *conninfo_describe(const char *conninfo);
extern bool conninfo_check_registry(char **newval, void **extra, GucSource source);

#endif							/* IDGEN_CONNINFO_H */
