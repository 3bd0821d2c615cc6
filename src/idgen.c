/*
 * idgen.c
 *		Module entry point: settings, shared memory hooks, and the checks that
 *		refuse to generate or decode under a configuration that could repeat
 *		or misread IDs.
 *
 * An out-of-range value for a setting in postgresql.conf does not stop the
 * server: PostgreSQL logs it and keeps the default.  For idgen.node_id that
 * default could make two servers share a node id, so every rejected value is
 * remembered here and idgen refuses to generate until it is fixed.
 */
#include "postgres.h"

#include "access/xlog.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "clock.h"
#include "compat.h"
#include "generator.h"
#include "hwm.h"
#include "idgen.h"
#include "layout.h"
#include "registry.h"

IDGEN_MODULE_MAGIC;

void		_PG_init(void);

/* The first setting whose configured value was rejected, if any. */
static const char *bad_setting = NULL;
static char *bad_setting_detail = NULL;
static bool bad_setting_affects_layout = false;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
idgen_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	registry_shmem_request();
	hwm_shmem_request();
}

static void
idgen_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	registry_shmem_startup();
	hwm_shmem_startup();
}

static void
note_bad_setting(const char *name, char *detail, bool affects_layout)
{
	if (bad_setting != NULL)
		return;
	/* Backends outlive the context this runs in (the postmaster's, or a query's). */
	bad_setting = name;
	bad_setting_detail = MemoryContextStrdup(TopMemoryContext, detail);
	bad_setting_affects_layout = affects_layout;
	ereport(WARNING,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("idgen will not generate IDs because %s is invalid", name),
			 errdetail_internal("%s", detail)));
}

static void
note_rejected_value(const char *name, const char *configured, bool affects_layout)
{
	note_bad_setting(name,
					 psprintf("The server configuration sets %s to \"%s\", which is not a valid value.",
							  name, configured),
					 affects_layout);
}

/*
 * Defining a setting applies the value postgresql.conf gave it, or logs and
 * drops that value when it is invalid.  Validating the configured value
 * again without applying it tells the two apart: that returns 0 only for an
 * invalid value.
 */
static void
check_configured_value(const char *name, const char *configured, bool affects_layout)
{
	if (configured != NULL &&
		set_config_option(name, configured, PGC_POSTMASTER, PGC_S_FILE,
						  GUC_ACTION_SET, false, DEBUG3, false) == 0)
		note_rejected_value(name, configured, affects_layout);
}

static char *
configured_value(const char *name)
{
	const char *value = GetConfigOption(name, true, false);

	return value ? pstrdup(value) : NULL;
}

/* Settings fixed at server start: only definable while preloading. */
static void
define_postmaster_settings(void)
{
	char	   *node_id = configured_value("idgen.node_id");
	char	   *node_bits = configured_value("idgen.node_bits");
	char	   *epoch = configured_value("idgen.epoch");

	DefineCustomIntVariable("idgen.node_id",
							"Node id of this server, different on every server that generates IDs.",
							NULL,
							&idgen_node_id,
							0, 0, LAYOUT_MASK(IDGEN_MACHINE_BITS),
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("idgen.node_bits",
							"Bits of the 10-bit worker field that hold the node id; the rest number backends.",
							NULL,
							&idgen_node_bits_setting,
							IDGEN_DEFAULT_NODE_BITS, 0, IDGEN_MACHINE_BITS,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);
	DefineCustomStringVariable("idgen.epoch",
							   "UTC date (YYYY-MM-DD) at which the time field of IDs starts.",
							   NULL,
							   &idgen_epoch_setting,
							   IDGEN_DEFAULT_EPOCH,
							   PGC_POSTMASTER, 0,
							   layout_check_epoch, NULL, NULL);

	check_configured_value("idgen.node_bits", node_bits, true);
	check_configured_value("idgen.epoch", epoch, true);
	check_configured_value("idgen.node_id", node_id, false);
	/* A default node id is how two servers end up sharing one. */
	if (node_id == NULL)
		note_bad_setting("idgen.node_id",
						 pstrdup("idgen.node_id is not set. Every server that generates IDs needs a node id of its own, so idgen does not assume one."),
						 false);
	if (idgen_node_id > LAYOUT_MASK(idgen_node_bits_setting))
		note_bad_setting("idgen.node_id",
						 psprintf("idgen.node_id is %d, but idgen.node_bits = %d allows node ids from 0 to %lld.",
								  idgen_node_id, idgen_node_bits_setting,
								  (long long) LAYOUT_MASK(idgen_node_bits_setting)),
						 false);
}

/*
 * Without preloading, the layout settings cannot be defined, but decoding
 * still has to use the values the server is configured with.
 */
static void
read_postmaster_settings(void)
{
	char	   *epoch = configured_value("idgen.epoch");
	char	   *node_bits = configured_value("idgen.node_bits");
	int64		epoch_ms;

	if (epoch != NULL)
	{
		if (layout_parse_epoch(epoch, &epoch_ms))
			idgen_epoch_setting = epoch;
		else
			note_rejected_value("idgen.epoch", epoch, true);
	}
	if (node_bits != NULL)
	{
		int			value;

		if (parse_int(node_bits, &value, 0, NULL) &&
			value >= 0 && value <= IDGEN_MACHINE_BITS)
			idgen_node_bits_setting = value;
		else
			note_rejected_value("idgen.node_bits", node_bits, true);
	}
}

static void
define_runtime_settings(void)
{
	DefineCustomIntVariable("idgen.clock_offset_ms",
							"Shifts the clock idgen reads, for fault-injection tests.",
							NULL,
							&idgen_clock_offset_ms,
							0, INT_MIN, INT_MAX,
							PGC_SUSET, GUC_UNIT_MS,
							NULL, NULL, NULL);
	DefineCustomIntVariable("idgen.max_lead_ms",
							"How far ahead of the clock a burst may borrow milliseconds before it waits.",
							NULL,
							&idgen_max_lead_ms,
							1000, 0, 60000,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);
	DefineCustomIntVariable("idgen.max_clock_regression_ms",
							"How far the clock may fall behind the newest ID before generating fails.",
							NULL,
							&idgen_max_clock_regression_ms,
							10000, 0, 3600000,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);
}

void
_PG_init(void)
{
	if (process_shared_preload_libraries_in_progress)
		define_postmaster_settings();
	else
		read_postmaster_settings();
	define_runtime_settings();
	layout_configure();

	/*
	 * Not preloaded, idgen.node_id and the other postmaster-level settings
	 * stay placeholders (decoding reads them): reserving the prefix would
	 * remove them with a warning in every session that loads idgen.
	 */
	if (!process_shared_preload_libraries_in_progress)
		return;
	MarkGUCPrefixReserved("idgen");

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = idgen_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = idgen_shmem_startup;
	hwm_register();
}

static void
report_bad_setting(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("idgen cannot be used because %s is invalid", bad_setting),
			 errdetail_internal("%s", bad_setting_detail),
			 errhint("Correct %s in postgresql.conf and restart the server.", bad_setting)));
}

/* Decoding needs the layout settings the server is configured with. */
void
idgen_require_layout(void)
{
	if (bad_setting != NULL && bad_setting_affects_layout)
		report_bad_setting();
}

/* Reading the registry needs only the shared memory of a preloaded idgen. */
void
idgen_require_registry(void)
{
	if (!registry_available())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("idgen must be loaded via shared_preload_libraries"),
				 errhint("Add idgen to shared_preload_libraries in postgresql.conf and restart the server.")));
}

/* Generating needs shared memory and every setting valid. */
void
idgen_require_generator(void)
{
	idgen_require_registry();
	if (bad_setting != NULL)
		report_bad_setting();
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot generate idgen IDs during recovery"),
				 errdetail("A standby shares its primary's idgen.node_id, so IDs it made could repeat the primary's."),
				 errhint("Generate IDs on the primary.")));
}
