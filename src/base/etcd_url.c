/*
 * etcd_url.c
 *		idgen.node_registry as etcd endpoints:
 *
 *			etcd://host1:2379,host2:2379/prefix?option=value&...
 *
 *		etcds:// speaks TLS.  The options are etcd's client options:
 *		cacert, cert and key (files), user and passfile (a file holding
 *		user's password).  A password in the setting itself is refused, as
 *		conninfo.c refuses one in a connection string: members of
 *		pg_read_all_settings read the setting.
 */
#include "postgres.h"

#include "lib/stringinfo.h"

#include "etcd_url.h"

/* Whether the registry setting names etcd endpoints rather than a database. */
bool
etcd_url_is(const char *registry)
{
	return registry != NULL &&
		(strncmp(registry, "etcd://", 7) == 0 || strncmp(registry, "etcds://", 8) == 0);
}

/* One option=value of the query; false with *err when unknown or password. */
static bool
etcd_url_option(EtcdUrl *url, char *opt, char **err)
{
	char	   *eq = strchr(opt, '=');

	if (eq == NULL || eq[1] == '\0')
	{
		*err = psprintf("Option \"%s\" has no value.", opt);
		return false;
	}
	*eq = '\0';
	if (strcmp(opt, "cacert") == 0)
		url->cacert = eq + 1;
	else if (strcmp(opt, "cert") == 0)
		url->cert = eq + 1;
	else if (strcmp(opt, "key") == 0)
		url->key = eq + 1;
	else if (strcmp(opt, "user") == 0)
		url->user = eq + 1;
	else if (strcmp(opt, "passfile") == 0)
		url->passfile = eq + 1;
	else if (strcmp(opt, "password") == 0)
	{
		*err = pstrdup("The registry's etcd address must not hold a password: members of pg_read_all_settings can read it. Name a file holding it with passfile=.");
		return false;
	}
	else
	{
		*err = psprintf("Unknown option \"%s\": etcd endpoints take cacert, cert, key, user and passfile.", opt);
		return false;
	}
	return true;
}

/*
 * Parses the setting into url (its strings palloc'd in the current
 * context); false with *err saying what is wrong.
 */
bool
etcd_url_parse(const char *registry, EtcdUrl *url, char **err)
{
	char	   *s = pstrdup(registry);
	char	   *hosts;
	char	   *path;
	char	   *query;

	memset(url, 0, sizeof(*url));
	url->tls = strncmp(s, "etcds://", 8) == 0;
	hosts = s + (url->tls ? 8 : 7);
	query = strchr(hosts, '?');
	if (query)
		*query++ = '\0';
	path = strchr(hosts, '/');
	if (path)
		*path = '\0';
	if (strchr(hosts, '@'))
	{
		*err = pstrdup("The registry's etcd address must not hold a user or password: members of pg_read_all_settings can read it. Use user= and passfile= options.");
		return false;
	}
	for (char *h = strtok(hosts, ","); h != NULL; h = strtok(NULL, ","))
	{
		if (url->nendpoints == ETCD_MAX_ENDPOINTS)
		{
			*err = psprintf("At most %d etcd endpoints.", ETCD_MAX_ENDPOINTS);
			return false;
		}
		url->endpoints[url->nendpoints++] = h;
	}
	if (url->nendpoints == 0)
	{
		*err = pstrdup("No etcd endpoint: write etcd://host:port,host:port/prefix.");
		return false;
	}
	/* the prefix, without trailing slashes; keys go below it */
	url->prefix = psprintf("/%s", path && path[1] ? path + 1 : "idgen");
	while (strlen(url->prefix) > 1 && url->prefix[strlen(url->prefix) - 1] == '/')
		url->prefix[strlen(url->prefix) - 1] = '\0';
	for (char *o = query ? strtok(query, "&") : NULL; o != NULL; o = strtok(NULL, "&"))
		if (!etcd_url_option(url, o, err))
			return false;
	return true;
}

/* What messages and views show: the endpoints, the prefix and the user. */
char *
etcd_url_describe(const char *registry)
{
	EtcdUrl		url;
	char	   *err;
	StringInfoData buf;

	if (!etcd_url_parse(registry, &url, &err))
		return pstrdup("(invalid etcd address)");
	initStringInfo(&buf);
	appendStringInfoString(&buf, url.tls ? "etcds://" : "etcd://");
	for (int i = 0; i < url.nendpoints; i++)
		appendStringInfo(&buf, "%s%s", i ? "," : "", url.endpoints[i]);
	appendStringInfoString(&buf, url.prefix);
	if (url.user)
		appendStringInfo(&buf, "?user=%s", url.user);
	return buf.data;
}
