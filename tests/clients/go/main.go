// A scripted session of github.com/go-sql-driver/mysql against a MySQL-protocol server
// (issue 17).
//
//	go run . -port 3307                 # interpolateParams=false: server-side prepared statements
//	go run . -port 3307 -interpolate    # interpolateParams=true: parameters quoted by the driver
//
// Every result is checked exactly; the first mismatch exits 1 with what differed. Passes
// against MariaDB 10.11, which is how the expectations were checked.
package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"os"
	"reflect"
	"time"

	"github.com/go-sql-driver/mysql"
)

const (
	blobLen    = 4 * 1024 * 1024
	streamRows = 100000
)

const table = `CREATE TABLE t (
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
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`

const cols = "name, amount, big_dec, d, dt, ts, dbl, u64, data, note"

// row is one row of t; nil pointers are NULLs. DECIMALs travel as their exact text.
type row struct {
	Name   sql.NullString
	Amount sql.NullString
	BigDec sql.NullString
	D      sql.NullTime
	Dt     sql.NullTime
	Ts     sql.NullTime
	Dbl    sql.NullFloat64
	U64    *uint64
	Data   []byte
	Note   sql.NullString
}

func (r row) args() []any {
	var u any
	if r.U64 != nil {
		u = *r.U64
	}
	var data any
	if r.Data != nil {
		data = r.Data
	}
	return []any{r.Name, r.Amount, r.BigDec, r.D, r.Dt, r.Ts, r.Dbl, u, data, r.Note}
}

func str(s string) sql.NullString  { return sql.NullString{String: s, Valid: true} }
func tm(t time.Time) sql.NullTime   { return sql.NullTime{Time: t, Valid: true} }
func f64(f float64) sql.NullFloat64 { return sql.NullFloat64{Float64: f, Valid: true} }
func u64(u uint64) *uint64          { return &u }

func date(y, m, d int) time.Time { return time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC) }
func datetime(y, mo, d, h, mi, s, us int) time.Time {
	return time.Date(y, time.Month(mo), d, h, mi, s, us*1000, time.UTC)
}

func allBytes() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// The rows every driver's session writes and reads back (the same values in each language).
var rows = []row{
	{str("alpha"), str("12345678901234.123456"), str("99999999.999999999999999999999999999999"),
		tm(date(2024, 2, 29)), tm(datetime(2024, 2, 29, 12, 34, 56, 789012)),
		tm(datetime(2024, 2, 29, 23, 59, 59, 0)), f64(0.1), u64(18446744073709551615), allBytes(),
		str("Grüße, 日本語, emoji 🎉, ñ")},
	{str("beta"), str("-99999999999999.999999"), str("-0.000000000000000000000000000001"),
		tm(date(1000, 1, 1)), tm(datetime(1000, 1, 1, 0, 0, 0, 0)), tm(datetime(1970, 1, 1, 0, 0, 1, 0)),
		f64(-1.7976931348623157e308), u64(0), []byte{}, str("")},
	{str("gamma"), str("0.000001"), str("3.141592653589793238462643383279"),
		tm(date(9999, 12, 31)), tm(datetime(9999, 12, 31, 23, 59, 59, 999999)),
		tm(datetime(2038, 1, 19, 3, 14, 7, 0)), f64(5e-324), u64(9223372036854775808),
		[]byte("\x00'\"\\\n\r\x1a%_"), str("it's \"quoted\" \\ back\nslash ?")},
	{},
}

type mismatch struct{ msg string }

func (m mismatch) Error() string { return m.msg }

func fail(format string, a ...any) { panic(mismatch{fmt.Sprintf(format, a...)}) }

func check(what string, got, want any) {
	if !reflect.DeepEqual(got, want) {
		fail("%s: got %s, want %s", what, show(got), show(want))
	}
}

func show(v any) string {
	if b, ok := v.([]byte); ok && len(b) > 64 {
		return fmt.Sprintf("%d bytes %x...", len(b), b[:32])
	}
	return fmt.Sprintf("%#v", v)
}

func must(err error, what string) {
	if err != nil {
		fail("%s: unexpected error: %v", what, err)
	}
}

func blobBytes(n int) []byte {
	out := make([]byte, n)
	var state uint32 = 1
	for i := range out {
		state = state*1103515245 + 12345
		out[i] = byte(state >> 16)
	}
	return out
}

type session struct {
	ctx  context.Context
	db   *sql.DB
	name string
}

func (s *session) exec(q string, args ...any) sql.Result {
	r, err := s.db.ExecContext(s.ctx, q, args...)
	must(err, q)
	return r
}

func (s *session) one(q string, args []any, dest ...any) {
	must(s.db.QueryRowContext(s.ctx, q, args...).Scan(dest...), q)
}

func scanRow(sc interface{ Scan(...any) error }, what string) (int64, row) {
	var id int64
	var r row
	var u sql.NullString
	must(sc.Scan(&id, &r.Name, &r.Amount, &r.BigDec, &r.D, &r.Dt, &r.Ts, &r.Dbl, &u, &r.Data, &r.Note), what)
	if u.Valid {
		var x uint64
		_, err := fmt.Sscan(u.String, &x)
		must(err, what+" u64")
		r.U64 = &x
	}
	return id, r
}

func checkRow(what string, got, want row) {
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := 0; i < g.NumField(); i++ {
		name := g.Type().Field(i).Name
		gf, wf := g.Field(i).Interface(), w.Field(i).Interface()
		if gp, ok := gf.(*uint64); ok {
			wp := wf.(*uint64)
			if (gp == nil) != (wp == nil) || (gp != nil && *gp != *wp) {
				fail("%s column %s: got %v, want %v", what, name, deref(gp), deref(wp))
			}
			continue
		}
		if gb, ok := gf.([]byte); ok {
			wb := wf.([]byte)
			if (gb == nil) != (wb == nil) || !bytes.Equal(gb, wb) {
				fail("%s column %s: got %s, want %s", what, name, show(gb), show(wb))
			}
			continue
		}
		check(what+" column "+name, gf, wf)
	}
}

func deref(p *uint64) any {
	if p == nil {
		return nil
	}
	return *p
}

func (s *session) roundTrip() {
	s.exec("DELETE FROM t")
	var ids []int64
	for _, r := range rows {
		res := s.exec("INSERT INTO t ("+cols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", r.args()...)
		n, err := res.RowsAffected()
		must(err, "rows affected")
		check("insert rows affected", n, int64(1))
		id, err := res.LastInsertId()
		must(err, "last insert id")
		if len(ids) > 0 && id <= ids[len(ids)-1] {
			fail("auto-increment ids not increasing: %v then %d", ids, id)
		}
		ids = append(ids, id)
	}
	stmt, err := s.db.PrepareContext(s.ctx, "SELECT id, "+cols+" FROM t WHERE id = ?")
	must(err, "prepare select")
	defer stmt.Close()
	// DECIMALs are written at their column's scale, so they read back as the same text.
	for i, want := range rows {
		id, got := scanRow(stmt.QueryRowContext(s.ctx, ids[i]), "select row")
		check("row id", id, ids[i])
		checkRow(fmt.Sprintf("row %d", ids[i]), got, want)
	}
	// The same rows through the text protocol (a query without parameters).
	all, err := s.db.QueryContext(s.ctx, "SELECT id, "+cols+" FROM t ORDER BY id")
	must(err, "select all")
	n := 0
	for all.Next() {
		want := rows[n]
		id, got := scanRow(all, "text row")
		check("text row id", id, ids[n])
		checkRow(fmt.Sprintf("text row %d", id), got, want)
		n++
	}
	must(all.Err(), "text rows")
	check("text row count", n, len(rows))
	// By a temporal, a DECIMAL, an unsigned and a NULL parameter.
	var id int64
	s.one("SELECT id FROM t WHERE d = ?", []any{date(2024, 2, 29)}, &id)
	check("select by date", id, ids[0])
	s.one("SELECT id FROM t WHERE dt = ?", []any{datetime(9999, 12, 31, 23, 59, 59, 999999)}, &id)
	check("select by datetime(6)", id, ids[2])
	s.one("SELECT id FROM t WHERE amount = ?", []any{"-99999999999999.999999"}, &id)
	check("select by decimal", id, ids[1])
	s.one("SELECT id FROM t WHERE u64 = ?", []any{uint64(18446744073709551615)}, &id)
	check("select by u64", id, ids[0])
	s.one("SELECT id FROM t WHERE name <=> ?", []any{nil}, &id)
	check("select null-safe", id, ids[3])
	var dbl float64
	s.one("SELECT dbl FROM t WHERE dbl < ?", []any{-1e308}, &dbl)
	check("select by double", dbl, -1.7976931348623157e308)
}

func (s *session) conn() *sql.Conn {
	c, err := s.db.Conn(s.ctx)
	must(err, "connection")
	return c
}

func count(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, name string) int {
	var n int
	must(q.QueryRowContext(ctx, "SELECT COUNT(*) FROM t WHERE name = ?", name).Scan(&n), "count")
	return n
}

func (s *session) transactions() {
	b := s.conn()
	defer b.Close()
	a := s.conn()
	defer a.Close()
	tx, err := a.BeginTx(s.ctx, nil)
	must(err, "begin")
	_, err = tx.ExecContext(s.ctx, "INSERT INTO t (name) VALUES (?)", "txn-commit")
	must(err, "insert in transaction")
	check("uncommitted row seen by another connection", count(s.ctx, b, "txn-commit"), 0)
	must(tx.Commit(), "commit")
	check("committed row seen by another connection", count(s.ctx, b, "txn-commit"), 1)
	tx, err = a.BeginTx(s.ctx, nil)
	must(err, "begin")
	_, err = tx.ExecContext(s.ctx, "INSERT INTO t (name) VALUES (?)", "txn-rollback")
	must(err, "insert in transaction")
	check("own uncommitted row", count(s.ctx, tx, "txn-rollback"), 1)
	must(tx.Rollback(), "rollback")
	check("rolled-back row, other connection", count(s.ctx, b, "txn-rollback"), 0)
	check("rolled-back row, own connection", count(s.ctx, a, "txn-rollback"), 0)
}

func expectError(what string, err error, code uint16, state, msg string) {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		fail("%s: got %v, want error %d", what, err, code)
	}
	check(what+" error code", me.Number, code)
	check(what+" SQLSTATE", string(me.SQLState[:]), state)
	check(what+" message", me.Message, msg)
}

func (s *session) errors() {
	s.exec("INSERT INTO t (id, name) VALUES (?, ?)", 1000000, "dup")
	_, err := s.db.ExecContext(s.ctx, "INSERT INTO t (id, name) VALUES (?, ?)", 1000000, "dup2")
	expectError("duplicate key", err, 1062, "23000", "Duplicate entry '1000000' for key 'PRIMARY'")
	var name string
	s.one("SELECT name FROM t WHERE id = ?", []any{1000000}, &name)
	check("row after 1062", name, "dup")

	a, b := s.conn(), s.conn()
	defer a.Close()
	defer b.Close()
	txa, err := a.BeginTx(s.ctx, nil)
	must(err, "begin a")
	must(txa.QueryRowContext(s.ctx, "SELECT name FROM t WHERE id = ? FOR UPDATE", 1000000).Scan(&name), "lock")
	_, err = b.ExecContext(s.ctx, "SET innodb_lock_wait_timeout=1")
	must(err, "set timeout")
	txb, err := b.BeginTx(s.ctx, nil)
	must(err, "begin b")
	start := time.Now()
	_, err = txb.ExecContext(s.ctx, "UPDATE t SET name = ? WHERE id = ?", "blocked", 1000000)
	waited := time.Since(start)
	expectError("lock wait timeout", err, 1205, "HY000", "Lock wait timeout exceeded; try restarting transaction")
	if waited < 900*time.Millisecond || waited > 10*time.Second {
		fail("lock wait lasted %v, want about 1 s", waited)
	}
	must(txb.Rollback(), "rollback b")
	must(txa.Rollback(), "rollback a")
	s.one("SELECT name FROM t WHERE id = ?", []any{1000000}, &name)
	check("row unchanged after timeout", name, "dup")
}

func (s *session) bigBlob() {
	var limit uint64
	s.one("SELECT @@max_allowed_packet", nil, &limit)
	// An interpolated statement carries the blob escaped; a prepared one sends it as is.
	if need := uint64(2*blobLen + 1024); limit < need {
		s.exec(fmt.Sprintf("SET GLOBAL max_allowed_packet = %d", need))
		// Connections made from now on take the new global; drop the old ones.
		s.db.SetMaxIdleConns(0)
		s.db.SetMaxIdleConns(2)
	}
	data := blobBytes(blobLen)
	res := s.exec("INSERT INTO t (name, data) VALUES (?, ?)", "blob", data)
	id, err := res.LastInsertId()
	must(err, "blob id")
	var n int64
	s.one("SELECT LENGTH(data) FROM t WHERE id = ?", []any{id}, &n)
	check("blob length on the server", n, int64(blobLen))
	var got []byte
	s.one("SELECT data FROM t WHERE id = ?", []any{id}, &got)
	if !bytes.Equal(got, data) {
		fail("4 MiB blob: got %s, want %s", show(got), show(data))
	}
}

func (s *session) stream() {
	s.exec("CREATE TABLE big (id INT PRIMARY KEY, s VARCHAR(32), v DECIMAL(12,2)) ENGINE=InnoDB")
	s.exec(fmt.Sprintf("INSERT INTO big SELECT seq, CONCAT('row-', seq), seq / 100 FROM seq_1_to_%d", streamRows))
	// database/sql reads rows off the socket as Next is called: nothing is buffered whole.
	rs, err := s.db.QueryContext(s.ctx, "SELECT id, s, v FROM big WHERE id > ? ORDER BY id", 0)
	must(err, "stream query")
	defer rs.Close()
	var n, sum int64
	var crc uint32
	for rs.Next() {
		var id int64
		var sv, v string
		must(rs.Scan(&id, &sv, &v), "stream row")
		n++
		if id != n || sv != fmt.Sprintf("row-%d", n) || v != fmt.Sprintf("%d.%02d", n/100, n%100) {
			fail("streamed row %d: got (%d, %q, %q)", n, id, sv, v)
		}
		crc = crc32.Update(crc, crc32.IEEETable, []byte(sv))
		sum += id
	}
	must(rs.Err(), "stream end")
	check("streamed row count", n, int64(streamRows))
	check("streamed id sum", sum, int64(streamRows)*(streamRows+1)/2)
	var want uint32
	for i := 1; i <= streamRows; i++ {
		want = crc32.Update(want, crc32.IEEETable, []byte(fmt.Sprintf("row-%d", i)))
	}
	check("streamed crc32 of s", crc, want)
}

func main() {
	host := flag.String("host", "127.0.0.1", "server host")
	port := flag.Int("port", 3307, "server port")
	user := flag.String("user", "root", "user")
	password := flag.String("password", "", "password")
	interpolate := flag.Bool("interpolate", false, "interpolateParams=true (client-side quoting)")
	flag.Parse()
	mode := "prepared"
	if *interpolate {
		mode = "interpolated"
	}
	dbName := "drv_go_" + mode
	step := "connect"
	defer func() {
		if r := recover(); r != nil {
			if m, ok := r.(mismatch); ok {
				fmt.Fprintf(os.Stderr, "go (%s): %s: %s\n", mode, step, m.msg)
				os.Exit(1)
			}
			panic(r)
		}
	}()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = *user, *password, "tcp", fmt.Sprintf("%s:%d", *host, *port)
	cfg.ParseTime, cfg.Loc = true, time.UTC
	cfg.InterpolateParams = *interpolate
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	must(err, "open")
	ctx := context.Background()
	_, err = admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+dbName)
	must(err, "drop database")
	_, err = admin.ExecContext(ctx, "CREATE DATABASE "+dbName)
	must(err, "create database")
	admin.Close()
	cfg.DBName = dbName
	db, err := sql.Open("mysql", cfg.FormatDSN())
	must(err, "open")
	s := &session{ctx: ctx, db: db, name: mode}
	s.exec(table)
	for _, st := range []struct {
		name string
		fn   func()
	}{
		{"round trip", s.roundTrip},
		{"transactions", s.transactions},
		{"errors", s.errors},
		{"4 MiB blob", s.bigBlob},
		{"stream", s.stream},
	} {
		step = st.name
		st.fn()
	}
	step = "cleanup"
	s.exec("DROP DATABASE " + dbName)
	must(db.Close(), "close")
	fmt.Printf("go (%s): all checks passed\n", mode)
}
