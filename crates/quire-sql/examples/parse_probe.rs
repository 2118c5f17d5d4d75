fn main() {
    let dialect = sqlparser::dialect::MySqlDialect {};
    for sql in std::env::args().skip(1) {
        match sqlparser::parser::Parser::parse_sql(&dialect, &sql) {
            Ok(s) => println!("{sql}\n  {:?}\n", s),
            Err(e) => println!("{sql}\n  ERR {e}\n"),
        }
    }
}
