/*
 * etcd_http.h
 *		Calls to etcd's v3 HTTP/JSON gateway (libcurl), each with a
 *		deadline, every endpoint tried in turn; the answers as jsonb.
 */
#ifndef IDGEN_ETCD_HTTP_H
#define IDGEN_ETCD_HTTP_H

#include "utils/jsonb.h"

#include "base/etcd_url.h"

extern const EtcdUrl *etcd_url(void);
extern JsonbContainer *etcd_call(const char *path, const char *body, int64 deadline_us,
								 char **err);
extern JsonbContainer *etcd_obj(JsonbContainer *c, const char *key);
extern char *etcd_text(JsonbContainer *c, const char *key);
extern int64 etcd_int(JsonbContainer *c, const char *key);
extern int	etcd_count(JsonbContainer *c, const char *key);
extern JsonbContainer *etcd_item(JsonbContainer *c, const char *key, int i);
extern char *etcd_b64(const char *s);
extern char *etcd_unb64(const char *s);
extern void etcd_finishing(void);
extern void etcd_close(void);

#endif							/* IDGEN_ETCD_HTTP_H */
