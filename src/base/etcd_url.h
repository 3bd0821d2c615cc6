/*
 * etcd_url.h
 *		idgen.node_registry as etcd endpoints: etcd://host:port,host:port/prefix
 *		(etcds:// for TLS), with the client options etcd offers.
 */
#ifndef IDGEN_ETCD_URL_H
#define IDGEN_ETCD_URL_H

#define ETCD_MAX_ENDPOINTS 16

typedef struct EtcdUrl
{
	bool		tls;
	int			nendpoints;
	char	   *endpoints[ETCD_MAX_ENDPOINTS];	/* "host:port" */
	char	   *prefix;			/* "/idgen" when none given; no trailing '/' */
	char	   *cacert;			/* options, NULL when not given */
	char	   *cert;
	char	   *key;
	char	   *user;
	char	   *passfile;		/* the password of user, in a file */
} EtcdUrl;

extern bool etcd_url_is(const char *registry);
extern bool etcd_url_parse(const char *registry, EtcdUrl *url, char **err);
extern char *etcd_url_describe(const char *registry);

#endif							/* IDGEN_ETCD_URL_H */
