// node-postgres (npm "pg") reading and writing idgen IDs, for
// t/060_js_client.pl.  Usage: node client.js HOST PORT USER DATABASE
//
// Prints one JSON object.  Each check is a tally {pass, of, first_failure}
// over the rows it looked at; the TAP test asserts on the tallies, so this
// script decides nothing itself.  The tables stored, stored53, echoed and
// echoed53 are made by the TAP test.
'use strict';

const { Client } = require('pg');

const [host, port, user, database] = process.argv.slice(2);
const config = { host, port: Number(port), user, database, application_name: 'idgen-js' };
const INT8 = 20;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER); // 2^53 - 1

// How many rows pass, and the first one that does not (for diagnostics).
function tally(rows, pass) {
  let n = 0;
  let bad = null;
  rows.forEach((row, i) => {
    if (pass(row, i)) n++;
    else if (bad === null) bad = show(row);
  });
  return { pass: n, of: rows.length, first_failure: bad };
}

// A row with its values' JavaScript types, JSON-safe (BigInt is not).
function show(row) {
  const out = {};
  for (const [k, v] of Object.entries(row)) out[k] = `${typeof v} ${String(v)}`;
  return out;
}

// Sorts rows by key with < and >, the way JavaScript compares the values,
// and tallies whether each lands at the rank SQL gave it (column r).
function orderKept(rows, key) {
  const sorted = [...rows].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  return tally(sorted, (row, i) => row.r === i + 1);
}

// The guard a JavaScript application should use when it reads bigints as
// Number: refuse, rather than round, a value Number cannot hold.
function safeNumber(text) {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new RangeError(`bigint ${text} is not a safe JavaScript integer`);
  return n;
}

// The checks on IDs read as Number, against the server's own text.
function numberChecks(rows) {
  return {
    number: tally(rows, (r) => typeof r.id === 'number'),
    safe: tally(rows, (r) => Number.isSafeInteger(r.id)),
    exact: tally(rows, (r) => String(r.id) === r.t),
  };
}

async function connect(parseInt8) {
  const client = new Client(config);
  // Per client, not pg.types.setTypeParser: that would change every client.
  if (parseInt8) client.setTypeParser(INT8, parseInt8);
  await client.connect();
  return client;
}

// 1. js53 IDs read as JavaScript Numbers.
async function js53(out) {
  const c = await connect(Number);
  try {
    const batch = (await c.query(`
      SELECT id, id::text AS t, (rank() OVER (ORDER BY id))::int AS r
      FROM idgen_next_batch(10000, 'js53') id
      ORDER BY random()`)).rows;
    out.js53_batch = numberChecks(batch);
    out.js53_batch.distinct = new Set(batch.map((r) => r.id)).size;
    out.js53_batch.order = orderKept(batch, (r) => r.id);

    const single = [];
    for (let i = 0; i < 100; i++) {
      single.push((await c.query(`SELECT id, id::text AS t FROM idgen_next('js53') id`)).rows[0]);
    }
    out.js53_single = numberChecks(single);

    // Controls: the same checks see the last safe integer as exact and
    // 2^53 + 1 as not, so they can fail.
    const edge = (await c.query(`
      SELECT x AS id, x::text AS t
      FROM (VALUES (9007199254740991::bigint), (9007199254740993::bigint)) v(x)
      ORDER BY x`)).rows;
    out.control = {
      max_safe: numberChecks([edge[0]]),
      above: numberChecks([edge[1]]),
    };
  } finally {
    await c.end();
  }

  // The guarded parser refuses 2^53 + 1 and passes js53 IDs.
  const g = await connect(safeNumber);
  try {
    try {
      out.guard_js53 = tally((await g.query(`
        SELECT id, id::text AS t FROM idgen_next_batch(1000, 'js53') id`)).rows,
        (r) => typeof r.id === 'number' && String(r.id) === r.t);
    } catch (e) {
      out.guard_js53 = { pass: 0, of: 0, first_failure: `${e.name}: ${e.message}` };
    }
    try {
      await g.query('SELECT 9007199254740993::bigint AS id');
      out.guard_error = null;
    } catch (e) {
      out.guard_error = `${e.name}: ${e.message}`;
    }
    // The connection is still usable after the refused row.
    out.guard_after = (await g.query('SELECT 1::bigint AS one')).rows[0].one;
  } finally {
    await g.end();
  }
}

// 2. Default IDs read with node-postgres's default parser: strings.
async function defaults(out) {
  const c = await connect(null);
  try {
    const batch = (await c.query(`
      SELECT id, id::text AS t, (rank() OVER (ORDER BY id))::int AS r
      FROM idgen_next_batch(1000) id
      ORDER BY random()`)).rows;
    const single = [];
    for (let i = 0; i < 100; i++) {
      single.push((await c.query('SELECT id, id::text AS t FROM idgen_next() id')).rows[0]);
    }
    for (const [name, rows] of [['default_batch', batch], ['default_single', single]]) {
      out[name] = {
        string: tally(rows, (r) => typeof r.id === 'string'),
        text: tally(rows, (r) => r.id === r.t),
        bigint: tally(rows, (r) => BigInt(r.id).toString() === r.t),
        above_safe: tally(rows, (r) => BigInt(r.id) > MAX_SAFE),
        // Passes when Number(id) gives the ID back: the test expects few or none.
        number_exact: tally(rows, (r) => String(Number(r.id)) === r.t),
        number_distinct: new Set(rows.map((r) => Number(r.id))).size,
      };
    }
    out.default_batch.order_bigint = orderKept(batch, (r) => BigInt(r.id));
  } finally {
    await c.end();
  }
}

// 3. IDs sent back as parameters.
async function roundTrip(out) {
  const c = await connect(null);
  try {
    const rows = (await c.query('SELECT n, id FROM stored ORDER BY n')).rows;
    const eq = async (value, n) =>
      (await c.query('SELECT id = $1::bigint AS eq FROM stored WHERE n = $2', [value, n])).rows[0].eq;
    const results = [];
    for (const { n, id } of rows) {
      const big = BigInt(id);
      const found = await c.query('SELECT n FROM stored WHERE id = $1', [big]);
      results.push({
        n,
        id,
        as_string: await eq(id, n),
        as_bigint: await eq(big, n),
        lookup: found.rows.length === 1 && found.rows[0].n === n,
        as_number: await eq(Number(id), n),
      });
      await c.query('INSERT INTO echoed (n, id) VALUES ($1, $2)', [n, big]);
    }
    out.send = {
      string: tally(results, (r) => r.as_string === true),
      bigint: tally(results, (r) => r.as_bigint === true),
      lookup: tally(results, (r) => r.lookup),
      // Passes when the Number sent matches the stored ID: expected rarely.
      number: tally(results, (r) => r.as_number === true),
    };
  } finally {
    await c.end();
  }

  const c53 = await connect(Number);
  try {
    const rows = (await c53.query('SELECT n, id FROM stored53 ORDER BY n')).rows;
    const results = [];
    for (const { n, id } of rows) {
      const r = await c53.query('SELECT id = $1::bigint AS eq FROM stored53 WHERE n = $2', [id, n]);
      results.push({ n, id, eq: r.rows[0].eq });
      await c53.query('INSERT INTO echoed53 (n, id) VALUES ($1, $2)', [n, id]);
    }
    out.send53 = {
      number: tally(results, (r) => typeof r.id === 'number'),
      equal: tally(results, (r) => r.eq === true),
    };
  } finally {
    await c53.end();
  }
}

async function main() {
  const out = {};
  await js53(out);
  await defaults(out);
  await roundTrip(out);
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exitCode = 1;
});
