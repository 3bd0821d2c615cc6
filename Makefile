# idgen: PGXS build.  "make installcheck" runs pg_regress, isolation and TAP
# tests against temporary, preloaded instances (see test/idgen.conf).

MODULE_big = idgen
OBJS = \
	$(WIN32RES) \
	src/base/clock.o \
	src/base/compat.o \
	src/base/conninfo.o \
	src/base/durable.o \
	src/base/etcd_url.o \
	src/base/layout.o \
	src/base/layout_table.o \
	src/base/node.o \
	src/base/random.o \
	src/base/settings.o \
	src/defs/constraint.o \
	src/defs/layout_defs.o \
	src/defs/layout_defs_change.o \
	src/defs/layouts_view.o \
	src/defs/restore.o \
	src/gen/generator.o \
	src/gen/layout_gen.o \
	src/gen/next.o \
	src/gen/plan.o \
	src/gen/slots.o \
	src/gen/stats.o \
	src/gen/step.o \
	src/gen/workers_view.o \
	src/horizon/horizon.o \
	src/horizon/horizon_file.o \
	src/horizon/horizon_sql.o \
	src/idgen.o \
	src/lease/etcd_http.o \
	src/lease/etcd_kv.o \
	src/lease/lease.o \
	src/lease/lease_conn.o \
	src/lease/lease_etcd.o \
	src/lease/lease_pg.o \
	src/lease/lease_state.o \
	src/lease/lease_token.o \
	src/lease/lease_worker.o \
	src/marks/marks.o \
	src/marks/marks_file.o \
	src/marks/marks_load.o \
	src/marks/marks_reserve.o \
	src/marks/marks_writer.o \
	src/marks/marks_xlog.o \
	src/provenance/clone.o \
	src/provenance/provenance.o \
	src/provenance/provenance_state.o \
	src/provenance/provenance_table.o \
	src/provenance/provenance_trigger.o \
	src/provenance/utility.o \
	src/rmgr.o \
	src/sql/capacity.o \
	src/sql/decode.o \
	src/sql/encode.o \
	src/sql/objectid.o \
	src/sql/uuidv7.o

EXTENSION = idgen
# The version, as idgen.control gives it: the install script's name, and
# PG_MODULE_MAGIC_EXT's.
IDGEN_VERSION := $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" idgen.control)
# sql/idgen.sql defines the current version; the released scripts beside it
# are never edited: 1.0 in full, then one update per release.
DATA = sql/idgen--1.0.sql sql/idgen--1.0--1.1.sql sql/idgen--1.1--1.2.sql sql/idgen--1.2--1.3.sql \
	sql/idgen--1.3--1.4.sql sql/idgen--1.4--1.5.sql
DATA_built = sql/idgen--$(IDGEN_VERSION).sql
PGFILEDESC = "idgen - unique, time-ordered 64-bit IDs"

REGRESS = next decode layouts layouts_next layouts_custom guc encode uuidv7 objectid_io objectid_ops objectid_gen objectid_index multinode multinode_adopt privileges limits mark_wal pgedge partitions next_block nulls horizon stats node_lease errcodes
# Tests in test/sql, test/expected, test/specs; results in ./results and
# ./output_iso (ignored), not beside the tests.
REGRESS_OPTS = --inputdir=test --temp-instance=./tmp_check --temp-config=test/idgen.conf \
	--encoding=UTF8 --load-extension=idgen
ISOLATION = concurrent_next horizon_cursor layout_save workers_privacy states_recycled layout_shared_worker
ISOLATION_OPTS = --inputdir=test --temp-instance=./tmp_check_iso --temp-config=test/idgen.conf
# t/*.pl: the core; IDGEN_TEST_EXTRA="integration long" (scripts/test's
# default) adds the tests of real clients and other systems, and the slow ones.
TAP_TESTS = 1

# Node id leases (src/lease/lease_conn.c) talk to the registry with libpq, as
# contrib/dblink and postgres_fdw do.
PG_CPPFLAGS += -I$(libpq_srcdir)
SHLIB_LINK_INTERNAL = $(libpq)
# ... and to etcd (src/lease/etcd_http.c) through its HTTP/JSON gateway, with libcurl.
SHLIB_LINK += -lcurl

# src/ has a folder per module; a file names another folder's header by
# its path from src/ ("marks/marks.h").
PG_CPPFLAGS += -I$(srcdir)/src
PG_CPPFLAGS += -DIDGEN_VERSION='"$(IDGEN_VERSION)"'
# The custom WAL resource manager id (src/rmgr.c); WAL written with one id
# is replayed only by a build with the same id.
IDGEN_RMGR_ID ?= 171
PG_CPPFLAGS += -DIDGEN_RMGR_ID=$(IDGEN_RMGR_ID)
# Warnings; CI and scripts/matrix add -Werror through COPT.
PG_CFLAGS += -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# TAP tests mostly wait for servers and clocks: IDGEN_TAP_JOBS of them run at
# once.  scripts/test runs the integration tests with 1: they time failovers.
IDGEN_TAP_JOBS ?= 4
PG_PROVE_FLAGS += -j$(IDGEN_TAP_JOBS)

# PGXS tracks no header dependencies unless the server was configured with
# --enable-depend; rebuild everything when a header changes.
$(OBJS): $(wildcard src/*.h src/*/*.h)

sql/idgen--$(IDGEN_VERSION).sql: sql/idgen.sql
	cp $< $@
