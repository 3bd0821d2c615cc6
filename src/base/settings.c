/*
 * settings.c
 *		idgen's configuration parameters: their storage, definitions and
 *		checks, in one place.
 *
 * An out-of-range value for a setting in postgresql.conf does not stop the
 * server: PostgreSQL logs it and keeps the default.  For idgen.node_id that
 * default could make two servers share a node id, so every rejected value is
 * remembered here and idgen refuses to generate until it is fixed.  Settings
 * fixed at server start are defined only while preloading (a library loaded
 * later may not define them); otherwise their configured values are read as
 * placeholders, so that decoding still uses the server's layout.
 */
#include "postgres.h"

#include <limits.h>

#include "libpq-fe.h"
#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/varlena.h"

#include "compat.h"
#include "conninfo.h"
#include "layout.h"
#include "settings.h"

int			idgen_node_id = 0;
int			idgen_node_bits = IDGEN_DEFAULT_NODE_BITS;
char	   *idgen_epoch = NULL;
int			idgen_max_marks = SETTINGS_DEFAULT_MAX_MARKS;
IdgenLimits idgen_limits = {.max_lead_ms = 1000, .max_clock_regression_ms = 10000};
int			idgen_clock_offset_ms = 0;
char	   *idgen_node_registry = NULL;
int			idgen_node_lease_s = SETTINGS_DEFAULT_NODE_LEASE_S;
char	   *idgen_lease_test_unsafe = NULL;

/* The first setting whose configured value was rejected, if any. */
static const char *bad_setting = NULL;
static char *bad_setting_detail = NULL;
static bool bad_setting_affects_layout = false;
static char *bad_setting_hint = NULL;

static void
note_bad_setting_hint(const char *name, char *detail, bool affects_layout, const char *hint)
{
	if (bad_setting != NULL)
		return;
	/* Backends outlive the context this runs in (the postmaster's, or a query's). */
	bad_setting = name;
	bad_setting_detail = MemoryContextStrdup(TopMemoryContext, detail);
	bad_setting_affects_layout = affects_layout;
	if (hint != NULL)
		bad_setting_hint = MemoryContextStrdup(TopMemoryContext, hint);
	ereport(WARNING,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("idgen will not generate IDs because %s is invalid", name),
			 errdetail_internal("%s", detail),
			 hint ? errhint("%s", hint) : 0));
}

static void
note_bad_setting(const char *name, char *detail, bool affects_layout)
{
	note_bad_setting_hint(name, detail, affects_layout, NULL);
}

static void
note_rejected_value(const char *name, const char *configured, bool affects_layout)
{
	/* a connection string may hold a password: never shown */
	if (strcmp(name, "idgen.node_registry") == 0 && conninfo_has_password(configured))
		note_bad_setting_hint(name,
							  psprintf("The server configuration sets %s to a connection string with a password, which roles other than superusers could read.",
									   name),
							  affects_layout, CONNINFO_PASSWORD_HINT);
	else if (strcmp(name, "idgen.node_registry") == 0)
		note_bad_setting(name,
						 psprintf("The server configuration sets %s to a string that is not a libpq connection string.",
								  name),
						 affects_layout);
	else
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

/* idgen.epoch: a date that layout.c can count from. */
static bool
settings_check_epoch(char **newval, void **extra, GucSource source)
{
	int64		ms;

	if (layout_parse_epoch(*newval, &ms))
		return true;
	GUC_check_errdetail("The epoch must be a date written as YYYY-MM-DD, %s.", LAYOUT_EPOCH_RANGE);
	return false;
}

/*
 * The protections idgen.lease_test_unsafe names, as SETTINGS_UNSAFE_*
 * flags; false for a word that names none, in *bad.
 */
static bool
settings_parse_unsafe(const char *value, int *flags, char **bad)
{
	char	   *raw = pstrdup(value);
	List	   *words;
	ListCell   *lc;

	*flags = 0;
	*bad = NULL;
	if (!SplitIdentifierString(raw, ',', &words))
		return false;
	foreach(lc, words)
	{
		const char *word = lfirst(lc);

		if (strcmp(word, "fence") == 0)
			*flags |= SETTINGS_UNSAFE_FENCE;
		else if (strcmp(word, "ceiling") == 0)
			*flags |= SETTINGS_UNSAFE_CEILING;
		else if (strcmp(word, "floor") == 0)
			*flags |= SETTINGS_UNSAFE_FLOOR;
		else if (strcmp(word, "history") == 0)
			*flags |= SETTINGS_UNSAFE_HISTORY;
		else
		{
			*bad = pstrdup(word);
			return false;
		}
	}
	return true;
}

/* idgen.lease_test_unsafe: whole words only, so that no typo disables one. */
static bool
settings_check_unsafe(char **newval, void **extra, GucSource source)
{
	int			flags;
	char	   *bad;

	if (settings_parse_unsafe(*newval, &flags, &bad))
		return true;
	if (bad != NULL)
		GUC_check_errdetail("Unrecognized protection: \"%s\".", bad);
	else
		GUC_check_errdetail("List syntax is invalid.");
	GUC_check_errhint("List some of \"fence\", \"ceiling\", \"floor\" and \"history\", separated by commas.");
	return false;
}

int
settings_lease_unsafe(void)
{
	int			flags;
	char	   *bad;

	return settings_parse_unsafe(idgen_lease_test_unsafe ? idgen_lease_test_unsafe : "",
								 &flags, &bad) ? flags : 0;
}

/*
 * The node id comes from idgen.node_id or from a lease: both set is an
 * error, as is neither.
 */
static void
check_node_id_source(const char *node_id)
{
	bool		leased = idgen_node_registry != NULL && idgen_node_registry[0] != '\0';

	if (leased && node_id != NULL)
		note_bad_setting_hint("idgen.node_registry",
							  pstrdup("Both idgen.node_id and idgen.node_registry are set. A server takes its node id either from idgen.node_id or from a lease of the registry, never both."),
							  false,
							  "Remove idgen.node_id from postgresql.conf to lease node ids, or idgen.node_registry to set them by hand, and restart the server.");
	/* A default node id is how two servers end up sharing one. */
	else if (!leased && node_id == NULL)
		note_bad_setting_hint("idgen.node_id",
							  pstrdup("idgen.node_id is not set. Every server that generates IDs needs a node id of its own, so idgen does not assume one."),
							  false,
							  "Set idgen.node_id to a node id of this server's own, or idgen.node_registry to lease one from a registry, in postgresql.conf and restart the server.");
}

/* The settings of the layout and its node id, and the table of marks. */
static void
define_node_settings(void)
{
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
							&idgen_node_bits,
							IDGEN_DEFAULT_NODE_BITS, 0, IDGEN_MACHINE_BITS,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);
	DefineCustomStringVariable("idgen.epoch",
							   "UTC date (YYYY-MM-DD) at which the time field of IDs starts.",
							   NULL,
							   &idgen_epoch,
							   IDGEN_DEFAULT_EPOCH,
							   PGC_POSTMASTER, 0,
							   settings_check_epoch, NULL, NULL);
	DefineCustomIntVariable("idgen.max_marks",
							"Entries of the shared table of high-water marks.",
							"Marks that find it full share a mark with other layouts.",
							&idgen_max_marks,
							SETTINGS_DEFAULT_MAX_MARKS, SETTINGS_MIN_MAX_MARKS, SETTINGS_MAX_MAX_MARKS,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);
}

/* The settings of node id leases (lease.c). */
static void
define_lease_settings(void)
{
	DefineCustomStringVariable("idgen.node_registry",
							   "Connection string of the registry database this server leases its node id from; empty: none.",
							   "Set it instead of idgen.node_id on every server that leases.",
							   &idgen_node_registry,
							   "",
							   PGC_POSTMASTER, GUC_SUPERUSER_ONLY,
							   conninfo_check_registry, NULL, NULL);
	DefineCustomIntVariable("idgen.node_lease_s",
							"How long a node id lease lasts without renewal.",
							"The lease is renewed every third of it; a server that cannot renew stops generating before it ends.",
							&idgen_node_lease_s,
							SETTINGS_DEFAULT_NODE_LEASE_S, SETTINGS_MIN_NODE_LEASE_S, SETTINGS_MAX_NODE_LEASE_S,
							PGC_POSTMASTER, GUC_UNIT_S,
							NULL, NULL, NULL);
	DefineCustomStringVariable("idgen.lease_test_unsafe",
							   "Protections of node id leases to disable, for tests that show what they prevent.",
							   "A comma-separated list of \"fence\", \"ceiling\", \"floor\" and \"history\". Never set it on a server whose IDs matter.",
							   &idgen_lease_test_unsafe,
							   "",
							   PGC_POSTMASTER, GUC_NOT_IN_SAMPLE,
							   settings_check_unsafe, NULL, NULL);
}

/* Settings fixed at server start: only definable while preloading. */
static void
define_postmaster_settings(void)
{
	char	   *node_id = configured_value("idgen.node_id");
	char	   *node_bits = configured_value("idgen.node_bits");
	char	   *epoch = configured_value("idgen.epoch");
	char	   *max_marks = configured_value("idgen.max_marks");
	char	   *registry = configured_value("idgen.node_registry");
	char	   *lease_s = configured_value("idgen.node_lease_s");
	char	   *unsafe = configured_value("idgen.lease_test_unsafe");

	define_node_settings();
	define_lease_settings();

	/*
	 * The layout's settings first: only the first bad setting is kept, and
	 * settings_layout_valid() must know of a bad one of theirs whatever else
	 * is bad.
	 */
	check_configured_value("idgen.node_bits", node_bits, true);
	check_configured_value("idgen.epoch", epoch, true);
	check_configured_value("idgen.node_id", node_id, false);
	check_configured_value("idgen.max_marks", max_marks, false);
	check_configured_value("idgen.node_registry", registry, false);
	check_configured_value("idgen.node_lease_s", lease_s, false);
	check_configured_value("idgen.lease_test_unsafe", unsafe, false);
	check_node_id_source(node_id);
	if (idgen_node_id > LAYOUT_MASK(idgen_node_bits))
		note_bad_setting("idgen.node_id",
						 psprintf("idgen.node_id is %d, but idgen.node_bits = %d allows node ids from 0 to %lld.",
								  idgen_node_id, idgen_node_bits,
								  (long long) LAYOUT_MASK(idgen_node_bits)),
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
			idgen_epoch = epoch;
		else
			note_rejected_value("idgen.epoch", epoch, true);
	}
	if (node_bits != NULL)
	{
		int			value;

		if (parse_int(node_bits, &value, 0, NULL) &&
			value >= 0 && value <= IDGEN_MACHINE_BITS)
			idgen_node_bits = value;
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
							&idgen_limits.max_lead_ms,
							1000, 0, SETTINGS_MAX_LEAD_MS,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);
	DefineCustomIntVariable("idgen.max_clock_regression_ms",
							"How far the clock may fall behind the newest ID before generating fails.",
							NULL,
							&idgen_limits.max_clock_regression_ms,
							10000, 0, SETTINGS_MAX_CLOCK_REGRESSION_MS,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);
}

/*
 * Defines every setting; the prefix is reserved only when preloading, as
 * otherwise idgen.node_id and the other postmaster-level settings stay
 * placeholders, which reserving would remove with a warning.
 */
void
settings_define(void)
{
	if (process_shared_preload_libraries_in_progress)
		define_postmaster_settings();
	else
		read_postmaster_settings();
	define_runtime_settings();
	if (process_shared_preload_libraries_in_progress)
		MarkGUCPrefixReserved("idgen");
}

static void
report_bad_setting(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("idgen cannot be used because %s is invalid", bad_setting),
			 errdetail_internal("%s", bad_setting_detail),
			 bad_setting_hint ? errhint("%s", bad_setting_hint) :
			 errhint("Correct %s in postgresql.conf and restart the server.", bad_setting)));
}

/* Decoding needs the settings of the default layout to be valid. */
void
settings_require_layout(void)
{
	if (!settings_layout_valid())
		report_bad_setting();
}

/*
 * Shared memory exists only when idgen was preloaded: each module says
 * whether it has its part.
 */
void
settings_require_preloaded(bool attached)
{
	if (!attached)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("idgen must be loaded via shared_preload_libraries"),
				 errhint("Add idgen to shared_preload_libraries in postgresql.conf and restart the server.")));
}

/* Generating needs every setting valid. */
void
settings_require_all(void)
{
	if (bad_setting != NULL)
		report_bad_setting();
}

/* Whether this server can generate, as far as its settings go. */
bool
settings_all_valid(void)
{
	return bad_setting == NULL;
}

/* Whether the default layout is usable: settings_require_layout() passes. */
bool
settings_layout_valid(void)
{
	return bad_setting == NULL || !bad_setting_affects_layout;
}

