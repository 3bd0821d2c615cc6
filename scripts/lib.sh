# shellcheck shell=bash
# Shared by scripts/demo, scripts/test, scripts/matrix and scripts/bench:
# install what idgen needs on Debian 12, build and install it, run the suite,
# and run commands as an unprivileged user (initdb refuses root).

PG_MAJOR=15
PG_BIN=/usr/lib/postgresql/$PG_MAJOR/bin
APT_PACKAGES="postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR postgresql-contrib make gcc libipc-run-perl python3 python3-bson"
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
	apt-get update -qq -o DPkg::Lock::Timeout=600
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null
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
# Installs node-postgres there for t/060_js_client.pl.
copy_checkout() {
	local dest=$1
	git -C "$ROOT" ls-files -z --cached --others --exclude-standard |
		(cd "$ROOT" && xargs -0 cp --parents -t "$dest")
	npm_ci "$dest/test/js"
	if [ "$(id -u)" -eq 0 ]; then chown -R "$RUN_USER" "$dest"; fi
}

# Runs every suite (pg_regress, isolation, TAP) in copy $1 against the
# PostgreSQL whose pg_config is $2, where idgen is already installed; on
# failure prints the diffs and the TAP logs' ends and returns non-zero.
# The TAP tests that IDGEN_TEST_EXTRA names run too ("integration", "long"):
# the core and the long ones several at once (they mostly wait), then the
# integration tests one at a time, since they time failovers.
run_suite() {
	local work=$1 pg_config=$2 status=0 words=() word others=() integration=()
	read -r -a words <<<"${IDGEN_TEST_EXTRA:-}"
	for word in "${words[@]}"; do
		[ "$word" = integration ] || others+=("$word")
	done
	echo "IDGEN_TEST_EXTRA=${IDGEN_TEST_EXTRA:-} (core TAP tests only when empty)"
	as_user env IDGEN_TEST_EXTRA="${others[*]}" \
		make -C "$work" -s installcheck PG_CONFIG="$pg_config" PROVE_FLAGS="--timer" ||
		{ status=$?; suite_diagnostics "$work"; }
	if [ ${#others[@]} -lt ${#words[@]} ]; then
		mapfile -t integration < <(cd "$work" && grep -l "require_test_extra('integration')" t/*.pl)
		as_user env IDGEN_TEST_EXTRA="${IDGEN_TEST_EXTRA}" \
			make -C "$work" -s installcheck PG_CONFIG="$pg_config" PROVE_FLAGS="--timer" \
			REGRESS= ISOLATION= IDGEN_TAP_JOBS=1 PROVE_TESTS="${integration[*]}" ||
			{ status=$?; suite_diagnostics "$work"; }
	fi
	return $status
}

# Prints what a failed run left: the diffs and the end of each TAP log.
suite_diagnostics() {
	local f
	for f in "$1"/regression.diffs "$1"/output_iso/regression.diffs; do
		if [ -f "$f" ]; then echo "=== $f"; cat "$f"; fi
	done
	for f in "$1"/tmp_check/log/regress_log_*; do
		if [ -f "$f" ]; then echo "=== $f (tail)"; tail -n 60 "$f"; fi
	done
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
