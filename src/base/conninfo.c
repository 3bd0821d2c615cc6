/*
 * conninfo.c
 *		The registry's connection string (idgen.node_registry): what the
 *		setting accepts, and what messages show of it.
 *
 * Its password never reaches a message, a view or a setting another role
 * reads: the setting refuses one, and messages show only where the
 * registry is.
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "libpq-fe.h"
#include "utils/guc.h"

#include "conninfo.h"
#include "etcd_url.h"

/*
 * Whether a connection string holds a password.  Members of
 * pg_read_all_settings read every setting, GUC_SUPERUSER_ONLY ones too, in
 * pg_settings (its reset_val unaffected by any show hook), SHOW and
 * current_setting(), on every supported version: so the registry's
 * password must come from a password file instead.
 */
bool
conninfo_has_password(const char *conninfo)
{
	PQconninfoOption *opts = PQconninfoParse(conninfo, NULL);
	bool		found = false;

	/* etcd_url_parse() refuses a password */
	if (opts == NULL || etcd_url_is(conninfo))
		return false;
	for (PQconninfoOption *o = opts; o->keyword != NULL; o++)
		if (strcmp(o->keyword, "password") == 0 && o->val != NULL && o->val[0] != '\0')
			found = true;
	PQconninfoFree(opts);
	return found;
}

/* The connection string's host, port, database and user, for messages. */
char *
conninfo_describe(const char *conninfo)
{
	static const char *const shown[] = {"host", "hostaddr", "port", "dbname", "user"};
	PQconninfoOption *opts = PQconninfoParse(conninfo, NULL);
	StringInfoData buf;

	if (etcd_url_is(conninfo))
		return etcd_url_describe(conninfo);
	if (opts == NULL)
		return pstrdup("(invalid connection string)");
	initStringInfo(&buf);
	for (int i = 0; i < (int) lengthof(shown); i++)
		for (PQconninfoOption *o = opts; o->keyword != NULL; o++)
			if (strcmp(o->keyword, shown[i]) == 0 && o->val != NULL && o->val[0] != '\0')
				appendStringInfo(&buf, "%s%s=%s", buf.len ? " " : "", o->keyword, o->val);
	PQconninfoFree(opts);
	return buf.data;
}

/*
 * idgen.node_registry: empty, or a connection string libpq can read, without
 * a password (conninfo_has_password()).  lease.c shows only where the
 * registry is.
 */
bool
conninfo_check_registry(char **newval, void **extra, GucSource source)
{
	PQconninfoOption *opts;
	char	   *err = NULL;

	if (*newval == NULL || (*newval)[0] == '\0')
		return true;
	if (etcd_url_is(*newval))
	{
		EtcdUrl		url;

		if (etcd_url_parse(*newval, &url, &err))
			return true;
		GUC_check_errdetail("%s", err);
		return false;
	}
	opts = PQconninfoParse(*newval, &err);
	if (opts == NULL)
	{
		GUC_check_errdetail("The registry must be a libpq connection string: %s",
							err ? err : "out of memory");
		if (err)
			PQfreemem(err);
		return false;
	}
	PQconninfoFree(opts);
	if (conninfo_has_password(*newval))
	{
		GUC_check_errdetail("The registry's connection string must not hold a password: members of pg_read_all_settings can read it.");
		GUC_check_errhint(CONNINFO_PASSWORD_HINT);
		return false;
	}
	return true;
}
