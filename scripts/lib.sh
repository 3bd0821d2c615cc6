# shellcheck shell=bash
# Shared by scripts/demo, scripts/test, scripts/matrix and scripts/bench:
# install what idgen needs on Debian 12, build and install it, run the suite,
# and run commands as an unprivileged user (initdb refuses root).

PG_MAJOR=15
PG_BIN=/usr/lib/postgresql/$PG_MAJOR/bin
APT_PACKAGES="postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR postgresql-contrib make gcc libcurl4-openssl-dev libipc-run-perl python3 python3-bson"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export PATH="$PG_BIN:$PATH"

# Installs the Debian packages that are missing; only root can.
install_deps() {
	local missing=()
	for p in $APT_PACKAGES ${EXTRA_APT_PACKAGES:-}; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "missing Debian packages: ${missing[*]}; install them as root or run this script as root" >&2
		exit 1
	fi
	echo "installing: ${missing[*]}"
	# One install at a time: CI builds the matrix's PostgreSQL in the
	# background while scripts/test installs, and apt-get update has no
	# lock timeout of its own.
	(
		flock -w 1200 9
		apt-get update -qq -o DPkg::Lock::Timeout=600
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null
	) 9>/run/lock/idgen-install-deps
}

# Debian's nodejs and npm for the JavaScript client test, only those missing
# from PATH: a node already there (NodeSource, nvm) is kept, not replaced.
node_apt_packages() {
	command -v node >/dev/null || echo nodejs
	command -v npm >/dev/null || echo npm
}

# Installs the npm packages pinned by package-lock.json in directory $1,
# without running their install scripts.
npm_ci() {
	(cd "$1" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
}

# Builds idgen and installs it into the PostgreSQL tree (sudo when not root).
# BUILD_COPT adds compiler options (scripts/test: -Werror).
build_and_install() {
	local sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	make -C "$ROOT" -s PG_CONFIG="$PG_BIN/pg_config" COPT="${BUILD_COPT:-}" >/dev/null
	$sudo make -C "$ROOT" -s install PG_CONFIG="$PG_BIN/pg_config" >/dev/null
}

# The user that runs clusters: ourselves, or postgres when we are root.
RUN_USER=$(if [ "$(id -u)" -eq 0 ]; then echo postgres; else id -un; fi)

as_user() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u "$RUN_USER" -- env PATH="$PATH" "$@"
	else
		"$@"
	fi
}

# A scratch directory the unprivileged user owns.
user_tmpdir() {
	local d
	d=$(mktemp -d "${TMPDIR:-/tmp}/idgen.XXXXXX")
	[ "$(id -u)" -eq 0 ] && chown "$RUN_USER" "$d"
	echo "$d"
}

# Copies the checkout into directory $1, owned by the test user, for the suite
# to build in and write its results into: tracked and untracked files but no
# ignored ones, so no build outputs of another PostgreSQL version come along.
# Installs node-postgres there for t/060_js_client.pl, where npm is (it is
# installed for the integration tests only).
copy_checkout() {
	local dest=$1
	git -C "$ROOT" ls-files -z --cached --others --exclude-standard |
		(cd "$ROOT" && xargs -0 cp --parents -t "$dest")
	if command -v npm >/dev/null; then npm_ci "$dest/test/js"; fi
	if [ "$(id -u)" -eq 0 ]; then chown -R "$RUN_USER" "$dest"; fi
}

# Runs every suite (pg_regress, isolation, TAP) in copy $1 against the
# PostgreSQL whose pg_config is $2, where idgen is already installed, each
# suite on its own so that one failing does not hide the others; ends with a
# summary (see suite_summary) and returns non-zero on any failure.
# The TAP tests that IDGEN_TEST_EXTRA names run too ("integration", "long"):
# the core and the long ones several at once (they mostly wait), and beside
# them, in a second copy, the integration tests one at a time; then alone
# those that say "# Runs alone:" (a control that times a failover found no
# repeat beside the others).
run_suite() {
	local work=$1 pg_config=$2 status=0 words=() word others=() integration=() alone=() core=() beside="" beside_pid
	read -r -a words <<<"${IDGEN_TEST_EXTRA:-}"
	for word in "${words[@]}"; do
		[ "$word" = integration ] || others+=("$word")
	done
	SUITE_WORK=$work SUITE_PG_CONFIG=$pg_config
	SUITE_PG=$("$pg_config" --version)
	: >"$work/suite_summary" && : >"$work/suite_failures"
	# No INITDB_TEMPLATE (PostgreSQL 17's copies of one initdb for every
	# node): the copies share a system identifier, and idgen tells clusters
	# apart by it (t/024, t/025, t/056, t/063 failed on 18 with it).
	mapfile -t integration < <(cd "$work" && grep -l "require_test_extra('integration')" t/*.pl |
		xargs -r grep -L '^# Runs alone:')
	mapfile -t alone < <(cd "$work" && grep -l "require_test_extra('integration')" t/*.pl |
		xargs -r grep -l '^# Runs alone:')
	# The largest files first, as the likely longest: prove -j starts them in
	# the order given, and one long test started last would run alone.
	mapfile -t core < <(cd "$work" && grep -L "require_test_extra('integration')" t/*.pl | xargs -r ls -S)
	# Both TAP parts take their ports from one lock directory.
	export PG_TEST_PORT_DIR=$work/portlock
	if [ ${#others[@]} -lt ${#words[@]} ] && [ ${#integration[@]} -gt 0 ]; then
		# inside $work, so that whoever removes $work removes it too
		beside=$work/beside
		mkdir "$beside"
		tar -C "$work" --exclude=./beside -cf - . | tar -C "$beside" -xpf -
		if [ "$(id -u)" -eq 0 ]; then chown "$RUN_USER" "$beside"; fi
		(SUITE_WORK=$beside run_part "TAP: integration, one at a time, beside the core" "${IDGEN_TEST_EXTRA}" \
			REGRESS= ISOLATION= IDGEN_TAP_JOBS=1 PROVE_TESTS="${integration[*]}" || exit 1) >"$beside/part.log" 2>&1 &
		beside_pid=$!
	fi
	run_part regress "" ISOLATION= TAP_TESTS= || status=1
	run_part isolation "" REGRESS= TAP_TESTS= || status=1
	run_part "TAP: core${others[*]:+, ${others[*]}}" "${others[*]}" REGRESS= ISOLATION= \
		PROVE_TESTS="${core[*]}" || status=1
	if [ -n "$beside" ]; then
		wait "$beside_pid" || status=1
		cat "$beside/part.log"
		cat "$beside/suite_summary" >>"$work/suite_summary"
		cat "$beside/suite_failures" >>"$work/suite_failures"
		rm -rf "$beside"
	fi
	if [ ${#others[@]} -lt ${#words[@]} ]; then
		if [ ${#alone[@]} -gt 0 ]; then
			run_part "TAP: integration, alone" "${IDGEN_TEST_EXTRA}" \
				REGRESS= ISOLATION= IDGEN_TAP_JOBS=1 PROVE_TESTS="${alone[*]}" || status=1
		fi
	else
		echo "TAP: integration: not run (IDGEN_TEST_EXTRA lacks \"integration\")" >>"$work/suite_summary"
	fi
	suite_summary
	return $status
}

# run_part NAME IDGEN_TEST_EXTRA MAKE-ARGS...: one "make installcheck" in
# $SUITE_WORK, its output shown and kept in suite.out; notes in the summary
# how it went, what it skipped and, when it failed, what failed.
run_part() {
	local name=$1 extra=$2 out=$SUITE_WORK/suite.out rc
	shift 2
	echo "=== $name"
	as_user env IDGEN_TEST_EXTRA="$extra" \
		make -C "$SUITE_WORK" -s installcheck PG_CONFIG="$SUITE_PG_CONFIG" PROVE_FLAGS="--timer" "$@" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	if [ "$rc" -eq 0 ]; then
		echo "$name: passed" >>"$SUITE_WORK/suite_summary"
	else
		echo "$name: FAILED" >>"$SUITE_WORK/suite_summary"
	fi
	# prove: "t/070_citus.pl ...... skipped: reason"
	sed -n 's/^\(\[[0-9:]*\] \)\{0,1\}\(t\/[^ ]*\.pl\) \.* *skipped: \(.*\)/  skipped \2: \3/p' "$out" >>"$SUITE_WORK/suite_summary"
	[ "$rc" -eq 0 ] || suite_diagnostics "$out" >>"$SUITE_WORK/suite_failures"
	return "$rc"
}

# What a failed part left, for the failed tests only: pg_regress's diffs, or
# the end of each failed TAP file's own log; else the end of the output (the
# build or the harness failed).
suite_diagnostics() {
	local out=$1 names f log n=0
	names=$(sed -n -e 's/^test \([^ ]*\) *\.\.\. FAILED.*/\1/p' -e 's/^ \{1,\}\([^ ]*\) *\.\.\. FAILED.*/\1/p' \
		-e 's/^not ok [0-9]* *[-+] \([^ ]*\).*/\1/p' "$out")
	if [ -n "$names" ]; then
		for f in "$SUITE_WORK"/regression.diffs "$SUITE_WORK"/output_iso/regression.diffs; do
			[ -f "$f" ] || continue
			echo "--- failed: $(echo "$names" | tr '\n' ' ')(${f#"$SUITE_WORK"/}, first 80 lines)"
			head -n 80 "$f"
			n=1
		done
	fi
	# prove's "Test Summary Report": "t/070_citus.pl (Wstat: 256 ... Tests: 9 Failed: 1)"
	while read -r f; do
		log=tmp_check/log/regress_log_$(basename "$f" .pl)
		echo "--- failed: $f (the end of $log)"
		tail -n 40 "$SUITE_WORK/$log" 2>/dev/null || echo "(no $log: the test failed before it began one)"
		n=1
	done < <(sed -n 's/^\(t\/[^ ]*\.pl\) *(Wstat.*/\1/p' "$out")
	if [ "$n" -eq 0 ]; then
		echo "--- failed before any test could (the end of its output)"
		tail -n 30 "$out"
	fi
}

# The closing summary: the PostgreSQL, each part and what it skipped, then
# what failed, each with the end of its own log.
suite_summary() {
	echo
	echo "=== idgen test summary, on $SUITE_PG (IDGEN_TEST_EXTRA=\"${IDGEN_TEST_EXTRA:-}\")"
	cat "$SUITE_WORK/suite_summary"
	if [ -s "$SUITE_WORK/suite_failures" ]; then
		echo
		cat "$SUITE_WORK/suite_failures"
	fi
}

# Starts a throwaway cluster with idgen preloaded in a fresh directory and
# sets PGHOST/PGPORT/PGUSER for psql.  Extra settings come as arguments.
start_cluster() {
	CLUSTER_DIR=$(user_tmpdir)
	as_user initdb -D "$CLUSTER_DIR/data" -A trust -U postgres >/dev/null
	{
		echo "shared_preload_libraries = 'idgen'"
		echo "listen_addresses = ''"
		echo "unix_socket_directories = '$CLUSTER_DIR'"
		printf '%s\n' "$@"
	} >>"$CLUSTER_DIR/data/postgresql.conf"
	as_user pg_ctl -D "$CLUSTER_DIR/data" -l "$CLUSTER_DIR/server.log" -w start >/dev/null
	export PGHOST=$CLUSTER_DIR PGPORT=5432 PGUSER=postgres PGDATABASE=postgres
}

stop_cluster() {
	[ -n "${CLUSTER_DIR:-}" ] || return 0
	as_user pg_ctl -D "$CLUSTER_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
	rm -rf "$CLUSTER_DIR"
	CLUSTER_DIR=
}
