/*
 * etcd_kv.h
 *		The key-value and lease calls the etcd registry (lease_etcd.c)
 *		makes, each answer checked against the history this data directory
 *		saw of etcd.
 */
#ifndef IDGEN_ETCD_KV_H
#define IDGEN_ETCD_KV_H

#include "etcd_http.h"

extern char *etcd_cmp(const char *key, const char *target, const char *result,
					  const char *field, const char *value);
extern char *etcd_put(const char *key, const char *value, int64 lease);
extern char *etcd_get(const char *key);
extern char *etcd_del(const char *key);
extern JsonbContainer *etcd_txn(char *const *cmp, char *const *then, char *const *otherwise,
								int64 deadline_us, bool *succeeded, char **err);
extern JsonbContainer *etcd_txn_kv(JsonbContainer *answer, int i);
extern JsonbContainer *etcd_range_prefix(const char *prefix, int64 deadline_us, char **err);
extern int64 etcd_grant(int lease_s, int64 deadline_us, char **err);
extern int64 etcd_keepalive(int64 id, int64 deadline_us, char **err);
extern void etcd_revoke(int64 id, int64 deadline_us);
extern bool etcd_fence_history(int64 until_ms, int64 floor_ms, int64 deadline_us, char **err);
extern void etcd_history_save(void);

#endif							/* IDGEN_ETCD_KV_H */
