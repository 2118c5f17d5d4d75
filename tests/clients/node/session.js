// A scripted session of mysql2 against a MySQL-protocol server (issue 17).
//
//   node session.js --port 3307 --mode execute   # execute(): server-side prepared statements
//   node session.js --port 3307 --mode query     # query(): parameters quoted by the driver
//
// Every result is checked exactly; the first mismatch exits 1 with what differed. Passes
// against MariaDB 10.11, which is how the expectations were checked.
'use strict';

const assert = require('node:assert');
const zlib = require('node:zlib');
const mysql = require('mysql2/promise');

const BLOB_LEN = 4 * 1024 * 1024;
const STREAM_ROWS = 100000;

const TABLE = `CREATE TABLE t (
  id INT AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(64),
  amount DECIMAL(20,6),
  big_dec DECIMAL(38,30),
  d DATE,
  dt DATETIME(6),
  ts TIMESTAMP NULL,
  dbl DOUBLE,
  u64 BIGINT UNSIGNED,
  data LONGBLOB,
  note TEXT
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`;

const COLS = 'name, amount, big_dec, d, dt, ts, dbl, u64, data, note';

// The rows every driver's session writes and reads back (the same values in each language).
// With dateStrings and bigNumberStrings, temporal values, DECIMALs and BIGINT UNSIGNED travel
// as their exact text.
const ROWS = [
  ['alpha', '12345678901234.123456', '99999999.999999999999999999999999999999', '2024-02-29',
    '2024-02-29 12:34:56.789012', '2024-02-29 23:59:59', 0.1, '18446744073709551615',
    Buffer.from(Array.from({ length: 256 }, (_, i) => i)), 'Grüße, 日本語, emoji 🎉, ñ'],
  ['beta', '-99999999999999.999999', '-0.000000000000000000000000000001', '1000-01-01',
    '1000-01-01 00:00:00.000000', '1970-01-01 00:00:01', -1.7976931348623157e308, '0',
    Buffer.alloc(0), ''],
  ['gamma', '0.000001', '3.141592653589793238462643383279', '9999-12-31',
    '9999-12-31 23:59:59.999999', '2038-01-19 03:14:07', 5e-324, '9223372036854775808',
    Buffer.from('\x00\'"\\\n\r\x1a%_', 'latin1'), 'it\'s "quoted" \\ back\nslash ?'],
  [null, null, null, null, null, null, null, null, null, null],
];
const COL_NAMES = COLS.split(', ');

class Mismatch extends Error {}

function show(v) {
  if (Buffer.isBuffer(v) && v.length > 64) return `Buffer(${v.length}) ${v.subarray(0, 32).toString('hex')}...`;
  return JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? `${x}n` : x));
}

function check(what, got, want) {
  try {
    assert.deepStrictEqual(got, want);
  } catch {
    throw new Mismatch(`${what}: got ${show(got)}, want ${show(want)}`);
  }
}

function blobBytes(n) {
  // A 32-bit LCG, the same in every language's session.
  const out = Buffer.alloc(n);
  let state = 1;
  for (let i = 0; i < n; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    out[i] = (state >>> 16) & 0xff;
  }
  return out;
}

function crc32(buf, crc) {
  return zlib.crc32(buf, crc);
}

class Session {
  constructor(opts, mode) {
    this.opts = opts;
    this.mode = mode;
  }

  async connect(extra = {}) {
    return mysql.createConnection({
      ...this.opts,
      charset: 'utf8mb4_general_ci',
      supportBigNumbers: true,
      bigNumberStrings: true,
      dateStrings: true,
      ...extra,
    });
  }

  // The session's way of running a statement with parameters.
  async run(conn, sql, params = []) {
    const [res] = this.mode === 'execute' ? await conn.execute(sql, params) : await conn.query(sql, params);
    return res;
  }

  async one(conn, sql, params = []) {
    const rows = await this.run(conn, sql, params);
    if (rows.length !== 1) throw new Mismatch(`${sql}: expected one row, got ${rows.length}`);
    return rows[0];
  }

  async roundTrip(conn) {
    await this.run(conn, 'DELETE FROM t');
    const ids = [];
    for (const row of ROWS) {
      const res = await this.run(conn, `INSERT INTO t (${COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, row);
      check('insert affectedRows', res.affectedRows, 1);
      if (ids.length && res.insertId <= ids[ids.length - 1]) throw new Mismatch(`auto-increment ids not increasing: ${ids} then ${res.insertId}`);
      ids.push(res.insertId);
    }
    for (let i = 0; i < ROWS.length; i++) {
      const got = await this.one(conn, `SELECT id, ${COLS} FROM t WHERE id = ?`, [ids[i]]);
      const want = [...ROWS[i]];
      // A binary-protocol DATETIME with no fraction comes in its 7-byte form, which mysql2
      // prints without one whatever the column's scale (the text protocol sends .000000).
      if (this.mode === 'execute' && want[4] === '1000-01-01 00:00:00.000000') want[4] = '1000-01-01 00:00:00';
      check(`row ${ids[i]} id`, got.id, ids[i]);
      COL_NAMES.forEach((c, j) => check(`row ${ids[i]} column ${c}`, got[c], want[j]));
    }
    // By a temporal, a DECIMAL, an unsigned and a NULL parameter.
    check('select by date', await this.run(conn, 'SELECT id FROM t WHERE d = ?', ['2024-02-29']), [{ id: ids[0] }]);
    check('select by datetime(6)', await this.run(conn, 'SELECT id FROM t WHERE dt = ?', ['9999-12-31 23:59:59.999999']), [{ id: ids[2] }]);
    check('select by decimal', await this.run(conn, 'SELECT id FROM t WHERE amount = ?', ['-99999999999999.999999']), [{ id: ids[1] }]);
    check('select by u64', await this.run(conn, 'SELECT id FROM t WHERE u64 = ?', [18446744073709551615n]), [{ id: ids[0] }]);
    check('select null-safe', await this.run(conn, 'SELECT id FROM t WHERE name <=> ?', [null]), [{ id: ids[3] }]);
    check('select by double', await this.run(conn, 'SELECT dbl FROM t WHERE dbl < ?', [-1e308]), [{ dbl: -1.7976931348623157e308 }]);
    // Temporal values as JavaScript Dates (milliseconds: what a Date holds), in UTC.
    const dates = await this.connect({ dateStrings: false, timezone: 'Z' });
    try {
      const [r] = this.mode === 'execute'
        ? await dates.execute('SELECT d, dt, ts FROM t WHERE id = ?', [ids[0]])
        : await dates.query('SELECT d, dt, ts FROM t WHERE id = ?', [ids[0]]);
      check('date as Date', r[0].d.toISOString(), '2024-02-29T00:00:00.000Z');
      check('datetime(6) as Date', r[0].dt.toISOString(), '2024-02-29T12:34:56.789Z');
      check('timestamp as Date', r[0].ts.toISOString(), '2024-02-29T23:59:59.000Z');
      const when = new Date(Date.UTC(2000, 1, 29, 1, 2, 3, 456));
      const ins = this.mode === 'execute'
        ? await dates.execute('INSERT INTO t (name, dt) VALUES (?, ?)', ['js-date', when])
        : await dates.query('INSERT INTO t (name, dt) VALUES (?, ?)', ['js-date', when]);
      const [back] = await dates.query('SELECT dt FROM t WHERE id = ?', [ins[0].insertId]);
      check('Date parameter', back[0].dt.toISOString(), '2000-02-29T01:02:03.456Z');
    } finally {
      await dates.end();
    }
  }

  async count(conn, name) {
    const [rows] = await conn.execute('SELECT COUNT(*) AS n FROM t WHERE name = ?', [name]);
    return rows[0].n;
  }

  async transactions() {
    const a = await this.connect();
    const b = await this.connect();
    try {
      await a.beginTransaction();
      await this.run(a, 'INSERT INTO t (name) VALUES (?)', ['txn-commit']);
      check('uncommitted row seen by another connection', await this.count(b, 'txn-commit'), '0');
      await a.commit();
      check('committed row seen by another connection', await this.count(b, 'txn-commit'), '1');
      await a.beginTransaction();
      await this.run(a, 'INSERT INTO t (name) VALUES (?)', ['txn-rollback']);
      check('own uncommitted row', await this.count(a, 'txn-rollback'), '1');
      await a.rollback();
      check('rolled-back row, other connection', await this.count(b, 'txn-rollback'), '0');
      check('rolled-back row, own connection', await this.count(a, 'txn-rollback'), '0');
    } finally {
      await a.end();
      await b.end();
    }
  }

  async expectError(what, fn, errno, sqlState, message) {
    try {
      await fn();
    } catch (e) {
      if (e instanceof Mismatch) throw e;
      check(`${what} errno`, e.errno, errno);
      check(`${what} SQLSTATE`, e.sqlState, sqlState);
      check(`${what} message`, e.sqlMessage, message);
      return;
    }
    throw new Mismatch(`${what}: no error, want ${errno}`);
  }

  async errors(conn) {
    await this.run(conn, 'INSERT INTO t (id, name) VALUES (?, ?)', [1000000, 'dup']);
    await this.expectError('duplicate key', () => this.run(conn, 'INSERT INTO t (id, name) VALUES (?, ?)', [1000000, 'dup2']),
      1062, '23000', "Duplicate entry '1000000' for key 'PRIMARY'");
    check('row after 1062', await this.one(conn, 'SELECT name FROM t WHERE id = ?', [1000000]), { name: 'dup' });
    const a = await this.connect();
    const b = await this.connect();
    try {
      await a.beginTransaction();
      check('lock holder', await this.one(a, 'SELECT name FROM t WHERE id = ? FOR UPDATE', [1000000]), { name: 'dup' });
      await b.query('SET innodb_lock_wait_timeout=1');
      await b.beginTransaction();
      const start = Date.now();
      await this.expectError('lock wait timeout', () => this.run(b, 'UPDATE t SET name = ? WHERE id = ?', ['blocked', 1000000]),
        1205, 'HY000', 'Lock wait timeout exceeded; try restarting transaction');
      const waited = Date.now() - start;
      if (waited < 900 || waited > 10000) throw new Mismatch(`lock wait lasted ${waited} ms, want about 1 s`);
      await b.rollback();
      await a.rollback();
      check('row unchanged after timeout', await this.one(conn, 'SELECT name FROM t WHERE id = ?', [1000000]), { name: 'dup' });
    } finally {
      await a.end();
      await b.end();
    }
  }

  async bigBlob(conn) {
    const [[{ limit }]] = await conn.query('SELECT @@max_allowed_packet AS `limit`');
    // query() sends the blob as hex: twice its size.
    const need = 2 * BLOB_LEN + 1024;
    if (Number(limit) < need) {
      await conn.query(`SET GLOBAL max_allowed_packet = ${need}`);
      await conn.end();
      conn = await this.connect();
    }
    const data = blobBytes(BLOB_LEN);
    const res = await this.run(conn, 'INSERT INTO t (name, data) VALUES (?, ?)', ['blob', data]);
    check('blob length on the server', await this.one(conn, 'SELECT LENGTH(data) AS n FROM t WHERE id = ?', [res.insertId]), { n: BLOB_LEN });
    const got = await this.one(conn, 'SELECT data FROM t WHERE id = ?', [res.insertId]);
    if (!data.equals(got.data)) throw new Mismatch(`4 MiB blob: got ${show(got.data)}, want ${show(data)}`);
    return conn;
  }

  async stream(conn) {
    await conn.query('CREATE TABLE big (id INT PRIMARY KEY, s VARCHAR(32), v DECIMAL(12,2)) ENGINE=InnoDB');
    await conn.query(`INSERT INTO big SELECT seq, CONCAT('row-', seq), seq / 100 FROM seq_1_to_${STREAM_ROWS}`);
    // The core (callback) connection's stream(): rows are emitted as they arrive, with
    // backpressure, never collected.
    const core = conn.connection;
    const sql = 'SELECT id, s, v FROM big WHERE id > ? ORDER BY id';
    const cmd = this.mode === 'execute' ? core.execute(sql, [0]) : core.query(sql, [0]);
    let n = 0;
    let crc = 0;
    for await (const row of cmd.stream()) {
      n++;
      const v = `${Math.floor(n / 100)}.${String(n % 100).padStart(2, '0')}`;
      if (row.id !== n || row.s !== `row-${n}` || row.v !== v) throw new Mismatch(`streamed row ${n}: got ${show(row)}`);
      crc = crc32(Buffer.from(row.s), crc);
    }
    check('streamed row count', n, STREAM_ROWS);
    let want = 0;
    for (let i = 1; i <= STREAM_ROWS; i++) want = crc32(Buffer.from(`row-${i}`), want);
    check('streamed crc32 of s', crc, want);
  }
}

function args() {
  const a = { host: '127.0.0.1', port: 3307, user: 'root', password: '', mode: 'execute' };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) a[argv[i].replace(/^--/, '')] = argv[i + 1];
  a.port = Number(a.port);
  if (!['execute', 'query'].includes(a.mode)) throw new Error('--mode is execute or query');
  return a;
}

async function main() {
  const a = args();
  const db = `drv_node_${a.mode}`;
  const s = new Session({ host: a.host, port: a.port, user: a.user, password: a.password }, a.mode);
  let step = 'connect';
  let conn;
  try {
    conn = await s.connect();
    await conn.query(`DROP DATABASE IF EXISTS ${db}`);
    await conn.query(`CREATE DATABASE ${db}`);
    await conn.query(`USE ${db}`);
    s.opts.database = db;
    await conn.query(TABLE);
    step = 'round trip';
    await s.roundTrip(conn);
    step = 'transactions';
    await s.transactions();
    step = 'errors';
    await s.errors(conn);
    step = '4 MiB blob';
    conn = await s.bigBlob(conn);
    step = 'stream';
    await s.stream(conn);
    await conn.query(`DROP DATABASE ${db}`);
    await conn.end();
  } catch (e) {
    const what = e instanceof Mismatch ? e.message : `unexpected error: ${e.code || ''} ${e.errno || ''} ${e.message}`;
    console.error(`node (${a.mode}): ${step}: ${what}`);
    process.exit(1);
  }
  console.log(`node (${a.mode}): all checks passed`);
}

main();
