// A scripted session of MariaDB Connector/J (JDBC) against a MySQL-protocol server (issue 17).
//
//   java -cp target/classes:$(cat target/classpath.txt) Session --port 3307 --mode server
//   java -cp ... Session --port 3307 --mode client
//
// --mode server: useServerPrepStmts=true, PreparedStatements run as COM_STMT_PREPARE/EXECUTE;
// --mode client: useServerPrepStmts=false (the driver's default), parameters quoted by the
// driver into COM_QUERY text. Every result is checked exactly; the first mismatch exits 1
// with what differed. Passes against MariaDB 10.11, which is how the expectations were checked.

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.zip.CRC32;

public class Session {
    static final int BLOB_LEN = 4 * 1024 * 1024;
    static final int STREAM_ROWS = 100_000;

    static final String TABLE = "CREATE TABLE t (\n"
            + "  id INT AUTO_INCREMENT PRIMARY KEY,\n"
            + "  name VARCHAR(64),\n"
            + "  amount DECIMAL(20,6),\n"
            + "  big_dec DECIMAL(38,30),\n"
            + "  d DATE,\n"
            + "  dt DATETIME(6),\n"
            + "  ts TIMESTAMP NULL,\n"
            + "  dbl DOUBLE,\n"
            + "  u64 BIGINT UNSIGNED,\n"
            + "  data LONGBLOB,\n"
            + "  note TEXT\n"
            + ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4";

    static final String COLS = "name, amount, big_dec, d, dt, ts, dbl, u64, data, note";
    static final String[] COL_NAMES = COLS.split(", ");

    static byte[] allBytes() {
        byte[] b = new byte[256];
        for (int i = 0; i < 256; i++) b[i] = (byte) i;
        return b;
    }

    // The rows every driver's session writes and reads back (the same values in each language).
    static final Object[][] ROWS = {
        {"alpha", new BigDecimal("12345678901234.123456"), new BigDecimal("99999999.999999999999999999999999999999"),
            LocalDate.of(2024, 2, 29), LocalDateTime.of(2024, 2, 29, 12, 34, 56, 789012000),
            LocalDateTime.of(2024, 2, 29, 23, 59, 59), 0.1, new BigInteger("18446744073709551615"), allBytes(),
            "Grüße, 日本語, emoji 🎉, ñ"},
        {"beta", new BigDecimal("-99999999999999.999999"), new BigDecimal("-0.000000000000000000000000000001"),
            LocalDate.of(1000, 1, 1), LocalDateTime.of(1000, 1, 1, 0, 0, 0, 0), LocalDateTime.of(1970, 1, 1, 0, 0, 1),
            -1.7976931348623157e308, BigInteger.ZERO, new byte[0], ""},
        {"gamma", new BigDecimal("0.000001"), new BigDecimal("3.141592653589793238462643383279"),
            LocalDate.of(9999, 12, 31), LocalDateTime.of(9999, 12, 31, 23, 59, 59, 999999000),
            LocalDateTime.of(2038, 1, 19, 3, 14, 7), 5e-324, new BigInteger("9223372036854775808"),
            "\u0000'\"\\\n\r\u001a%_".getBytes(StandardCharsets.ISO_8859_1), "it's \"quoted\" \\ back\nslash ?"},
        {null, null, null, null, null, null, null, null, null, null},
    };

    static final class Mismatch extends RuntimeException {
        Mismatch(String m) {
            super(m);
        }
    }

    static String show(Object v) {
        if (v instanceof byte[] b) {
            if (b.length > 64) return "byte[" + b.length + "] " + hex(Arrays.copyOf(b, 32)) + "...";
            return "byte[] " + hex(b);
        }
        return v == null ? "null" : v + " (" + v.getClass().getSimpleName() + ")";
    }

    static String hex(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (byte x : b) s.append(String.format("%02x", x));
        return s.toString();
    }

    static void check(String what, Object got, Object want) {
        boolean same = (got instanceof byte[] g && want instanceof byte[] w) ? Arrays.equals(g, w) : Objects.equals(got, want);
        if (!same) throw new Mismatch(what + ": got " + show(got) + ", want " + show(want));
    }

    static byte[] blobBytes(int n) {
        // A 32-bit LCG, the same in every language's session.
        byte[] out = new byte[n];
        int state = 1;
        for (int i = 0; i < n; i++) {
            state = state * 1103515245 + 12345;
            out[i] = (byte) (state >>> 16);
        }
        return out;
    }

    final String url;
    final String mode;

    Session(String url, String mode) {
        this.url = url;
        this.mode = mode;
    }

    Connection connect() throws SQLException {
        return DriverManager.getConnection(url);
    }

    static void exec(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    static PreparedStatement prep(Connection c, String sql, Object... params) throws SQLException {
        PreparedStatement p = c.prepareStatement(sql, Statement.RETURN_GENERATED_KEYS);
        for (int i = 0; i < params.length; i++) p.setObject(i + 1, params[i]);
        return p;
    }

    static List<List<Object>> rows(Connection c, String sql, Object... params) throws SQLException {
        try (PreparedStatement p = prep(c, sql, params); ResultSet rs = p.executeQuery()) {
            List<List<Object>> out = new ArrayList<>();
            int n = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                List<Object> r = new ArrayList<>();
                for (int i = 1; i <= n; i++) r.add(rs.getObject(i));
                out.add(r);
            }
            return out;
        }
    }

    static Object one(Connection c, String sql, Object... params) throws SQLException {
        List<List<Object>> r = rows(c, sql, params);
        if (r.size() != 1 || r.get(0).size() != 1) throw new Mismatch(sql + ": expected one value, got " + r);
        return r.get(0).get(0);
    }

    // Each column read with the getter an application uses for its type.
    static Object[] readRow(ResultSet rs) throws SQLException {
        Object[] r = new Object[COL_NAMES.length];
        r[0] = rs.getString("name");
        r[1] = rs.getBigDecimal("amount");
        r[2] = rs.getBigDecimal("big_dec");
        r[3] = rs.getObject("d", LocalDate.class);
        r[4] = rs.getObject("dt", LocalDateTime.class);
        r[5] = rs.getObject("ts", LocalDateTime.class);
        double dbl = rs.getDouble("dbl");
        r[6] = rs.wasNull() ? null : dbl;
        r[7] = rs.getObject("u64", BigInteger.class);
        r[8] = rs.getBytes("data");
        r[9] = rs.getString("note");
        return r;
    }

    void roundTrip(Connection c) throws SQLException {
        exec(c, "DELETE FROM t");
        List<Long> ids = new ArrayList<>();
        for (Object[] row : ROWS) {
            try (PreparedStatement p = c.prepareStatement("INSERT INTO t (" + COLS + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    Statement.RETURN_GENERATED_KEYS)) {
                // The typed setters an application uses; NULLs with their SQL type.
                if (row[0] == null) {
                    int[] types = {java.sql.Types.VARCHAR, java.sql.Types.DECIMAL, java.sql.Types.DECIMAL, java.sql.Types.DATE,
                        java.sql.Types.TIMESTAMP, java.sql.Types.TIMESTAMP, java.sql.Types.DOUBLE, java.sql.Types.BIGINT,
                        java.sql.Types.BLOB, java.sql.Types.VARCHAR};
                    for (int i = 0; i < types.length; i++) p.setNull(i + 1, types[i]);
                } else {
                    p.setString(1, (String) row[0]);
                    p.setBigDecimal(2, (BigDecimal) row[1]);
                    p.setBigDecimal(3, (BigDecimal) row[2]);
                    p.setObject(4, row[3]);
                    p.setObject(5, row[4]);
                    p.setObject(6, row[5]);
                    p.setDouble(7, (Double) row[6]);
                    p.setObject(8, row[7]);
                    p.setBytes(9, (byte[]) row[8]);
                    p.setString(10, (String) row[9]);
                }
                check("insert update count", p.executeUpdate(), 1);
                try (ResultSet k = p.getGeneratedKeys()) {
                    if (!k.next()) throw new Mismatch("no generated key");
                    long id = k.getLong(1);
                    if (!ids.isEmpty() && id <= ids.get(ids.size() - 1)) throw new Mismatch("auto-increment ids not increasing: " + ids + " then " + id);
                    ids.add(id);
                }
            }
        }
        try (PreparedStatement p = c.prepareStatement("SELECT id, " + COLS + " FROM t WHERE id = ?")) {
            for (int i = 0; i < ROWS.length; i++) {
                p.setLong(1, ids.get(i));
                try (ResultSet rs = p.executeQuery()) {
                    if (!rs.next()) throw new Mismatch("row " + ids.get(i) + " not found");
                    check("row id", rs.getLong("id"), ids.get(i));
                    Object[] got = readRow(rs);
                    for (int j = 0; j < got.length; j++) check("row " + ids.get(i) + " column " + COL_NAMES[j], got[j], ROWS[i][j]);
                    check("rows for one id", rs.next(), false);
                }
            }
        }
        // The same rows through a plain Statement (the text protocol in both modes).
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT id, " + COLS + " FROM t ORDER BY id")) {
            for (int i = 0; i < ROWS.length; i++) {
                if (!rs.next()) throw new Mismatch("text row " + i + " missing");
                check("text row id", rs.getLong("id"), ids.get(i));
                Object[] got = readRow(rs);
                for (int j = 0; j < got.length; j++) check("text row " + ids.get(i) + " column " + COL_NAMES[j], got[j], ROWS[i][j]);
            }
            check("text rows end", rs.next(), false);
        }
        // By a temporal, a DECIMAL, an unsigned and a NULL parameter.
        check("select by date", one(c, "SELECT id FROM t WHERE d = ?", LocalDate.of(2024, 2, 29)), ids.get(0).intValue());
        check("select by datetime(6)", one(c, "SELECT id FROM t WHERE dt = ?", LocalDateTime.of(9999, 12, 31, 23, 59, 59, 999999000)), ids.get(2).intValue());
        check("select by decimal", one(c, "SELECT id FROM t WHERE amount = ?", new BigDecimal("-99999999999999.999999")), ids.get(1).intValue());
        check("select by u64", one(c, "SELECT id FROM t WHERE u64 = ?", new BigInteger("18446744073709551615")), ids.get(0).intValue());
        check("select null-safe", one(c, "SELECT id FROM t WHERE name <=> ?", (Object) null), ids.get(3).intValue());
        check("select by double", one(c, "SELECT dbl FROM t WHERE dbl < ?", -1e308), -1.7976931348623157e308);
        check("select by timestamp", one(c, "SELECT id FROM t WHERE ts = ?", java.sql.Timestamp.valueOf("2038-01-19 03:14:07")), ids.get(2).intValue());
    }

    // A value the driver must hand over as a number (an integer column).
    static long number(String what, Object v) {
        if (!(v instanceof Number n)) throw new Mismatch(what + ": got " + show(v) + ", want a number");
        return n.longValue();
    }

    static long count(Connection c, String name) throws SQLException {
        return number("COUNT(*)", one(c, "SELECT COUNT(*) FROM t WHERE name = ?", name));
    }

    void transactions() throws SQLException {
        try (Connection a = connect(); Connection b = connect()) {
            a.setAutoCommit(false);
            prep(a, "INSERT INTO t (name) VALUES (?)", "txn-commit").executeUpdate();
            check("uncommitted row seen by another connection", count(b, "txn-commit"), 0L);
            a.commit();
            check("committed row seen by another connection", count(b, "txn-commit"), 1L);
            prep(a, "INSERT INTO t (name) VALUES (?)", "txn-rollback").executeUpdate();
            check("own uncommitted row", count(a, "txn-rollback"), 1L);
            a.rollback();
            check("rolled-back row, other connection", count(b, "txn-rollback"), 0L);
            check("rolled-back row, own connection", count(a, "txn-rollback"), 0L);
            a.commit();
        }
    }

    interface Sql {
        void run() throws SQLException;
    }

    static void expectError(String what, Sql fn, int code, String state, String message) {
        try {
            fn.run();
        } catch (SQLException e) {
            check(what + " error code", e.getErrorCode(), code);
            check(what + " SQLSTATE", e.getSQLState(), state);
            // Connector/J puts "(conn=N) " before the server's message.
            check(what + " message", e.getMessage().replaceFirst("^\\(conn=\\d+\\) ", ""), message);
            return;
        }
        throw new Mismatch(what + ": no error, want " + code);
    }

    void errors(Connection c) throws SQLException {
        prep(c, "INSERT INTO t (id, name) VALUES (?, ?)", 1000000, "dup").executeUpdate();
        expectError("duplicate key", () -> prep(c, "INSERT INTO t (id, name) VALUES (?, ?)", 1000000, "dup2").executeUpdate(),
                1062, "23000", "Duplicate entry '1000000' for key 'PRIMARY'");
        check("row after 1062", one(c, "SELECT name FROM t WHERE id = ?", 1000000), "dup");
        try (Connection a = connect(); Connection b = connect()) {
            a.setAutoCommit(false);
            b.setAutoCommit(false);
            check("lock holder", one(a, "SELECT name FROM t WHERE id = ? FOR UPDATE", 1000000), "dup");
            exec(b, "SET innodb_lock_wait_timeout=1");
            long start = System.nanoTime();
            expectError("lock wait timeout", () -> prep(b, "UPDATE t SET name = ? WHERE id = ?", "blocked", 1000000).executeUpdate(),
                    1205, "HY000", "Lock wait timeout exceeded; try restarting transaction");
            long waitedMs = (System.nanoTime() - start) / 1_000_000;
            if (waitedMs < 900 || waitedMs > 10_000) throw new Mismatch("lock wait lasted " + waitedMs + " ms, want about 1 s");
            b.rollback();
            a.rollback();
        }
        check("row unchanged after timeout", one(c, "SELECT name FROM t WHERE id = ?", 1000000), "dup");
    }

    Connection bigBlob(Connection c) throws SQLException {
        long limit = number("@@max_allowed_packet", one(c, "SELECT @@max_allowed_packet"));
        // The client-side mode sends the blob escaped in the statement text.
        long need = 2L * BLOB_LEN + 1024;
        if (limit < need) {
            exec(c, "SET GLOBAL max_allowed_packet = " + need);
            c.close();
            c = connect();
        }
        byte[] data = blobBytes(BLOB_LEN);
        long id;
        try (PreparedStatement p = prep(c, "INSERT INTO t (name, data) VALUES (?, ?)", "blob", data)) {
            p.executeUpdate();
            try (ResultSet k = p.getGeneratedKeys()) {
                k.next();
                id = k.getLong(1);
            }
        }
        check("blob length on the server", number("LENGTH(data)", one(c, "SELECT LENGTH(data) FROM t WHERE id = ?", id)), (long) BLOB_LEN);
        check("4 MiB blob", one(c, "SELECT data FROM t WHERE id = ?", id), data);
        return c;
    }

    void stream(Connection c) throws SQLException {
        exec(c, "CREATE TABLE big (id INT PRIMARY KEY, s VARCHAR(32), v DECIMAL(12,2)) ENGINE=InnoDB");
        exec(c, "INSERT INTO big SELECT seq, CONCAT('row-', seq), seq / 100 FROM seq_1_to_" + STREAM_ROWS);
        try (PreparedStatement p = c.prepareStatement("SELECT id, s, v FROM big WHERE id > ? ORDER BY id",
                ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_READ_ONLY)) {
            // A fetch size makes Connector/J read the rows in batches as they are consumed
            // instead of loading the whole result.
            p.setFetchSize(1000);
            p.setInt(1, 0);
            CRC32 crc = new CRC32();
            long n = 0;
            try (ResultSet rs = p.executeQuery()) {
                while (rs.next()) {
                    n++;
                    String s = rs.getString(2);
                    BigDecimal v = rs.getBigDecimal(3);
                    if (rs.getLong(1) != n || !s.equals("row-" + n) || !v.equals(BigDecimal.valueOf(n, 2))) {
                        throw new Mismatch("streamed row " + n + ": got (" + rs.getLong(1) + ", " + s + ", " + v + ")");
                    }
                    crc.update(s.getBytes(StandardCharsets.UTF_8));
                }
            }
            check("streamed row count", n, (long) STREAM_ROWS);
            CRC32 want = new CRC32();
            for (int i = 1; i <= STREAM_ROWS; i++) want.update(("row-" + i).getBytes(StandardCharsets.UTF_8));
            check("streamed crc32 of s", crc.getValue(), want.getValue());
        }
    }

    public static void main(String[] argv) throws Exception {
        String host = "127.0.0.1", user = "root", password = "", mode = "server";
        int port = 3307;
        for (int i = 0; i + 1 < argv.length; i += 2) {
            switch (argv[i]) {
                case "--host" -> host = argv[i + 1];
                case "--port" -> port = Integer.parseInt(argv[i + 1]);
                case "--user" -> user = argv[i + 1];
                case "--password" -> password = argv[i + 1];
                case "--mode" -> mode = argv[i + 1];
                default -> throw new IllegalArgumentException(argv[i]);
            }
        }
        if (!mode.equals("server") && !mode.equals("client")) throw new IllegalArgumentException("--mode is server or client");
        String db = "drv_java_" + mode;
        String base = "jdbc:mariadb://" + host + ":" + port + "/";
        String opts = "?user=" + user + "&password=" + password + "&useServerPrepStmts=" + mode.equals("server");
        String step = "connect";
        try {
            try (Connection c = DriverManager.getConnection(base + opts)) {
                exec(c, "DROP DATABASE IF EXISTS " + db);
                exec(c, "CREATE DATABASE " + db);
            }
            Session s = new Session(base + db + opts, mode);
            Connection c = s.connect();
            exec(c, TABLE);
            step = "round trip";
            s.roundTrip(c);
            step = "transactions";
            s.transactions();
            step = "errors";
            s.errors(c);
            step = "4 MiB blob";
            c = s.bigBlob(c);
            step = "stream";
            s.stream(c);
            exec(c, "DROP DATABASE " + db);
            c.close();
        } catch (Mismatch e) {
            System.err.println("java (" + mode + "): " + step + ": " + e.getMessage());
            System.exit(1);
        } catch (SQLException e) {
            System.err.println("java (" + mode + "): " + step + ": unexpected error " + e.getErrorCode() + " " + e.getSQLState() + ": " + e.getMessage());
            System.exit(1);
        }
        System.out.println("java (" + mode + "): all checks passed");
    }
}
