//! Replication statements a monitoring tool sends to any server. Quire has no replication:
//! SHOW SLAVE STATUS (and its REPLICA and ALL SLAVES spellings) answers MariaDB 10.11's
//! columns with no row, as a MariaDB that is not a replica does.

use crate::control::send_table;
use crate::error::Result;
use crate::meta::{FieldType, RowSink};
use crate::session::Outcome;

// SHOW SLAVE STATUS: MariaDB 10.11's columns. Quire has no replication, so there is never
// a row; monitoring (mysqld_exporter's slave_status) reads the empty set as "not a replica".
const S: FieldType = FieldType::VarString;
const L: FieldType = FieldType::Long;
const LL: FieldType = FieldType::LongLong;
const D: FieldType = FieldType::Double;
const SLAVE_STATUS: &[(&str, FieldType)] = &[
    ("Slave_IO_State", S),
    ("Master_Host", S),
    ("Master_User", S),
    ("Master_Port", L),
    ("Connect_Retry", L),
    ("Master_Log_File", S),
    ("Read_Master_Log_Pos", LL),
    ("Relay_Log_File", S),
    ("Relay_Log_Pos", LL),
    ("Relay_Master_Log_File", S),
    ("Slave_IO_Running", S),
    ("Slave_SQL_Running", S),
    ("Replicate_Do_DB", S),
    ("Replicate_Ignore_DB", S),
    ("Replicate_Do_Table", S),
    ("Replicate_Ignore_Table", S),
    ("Replicate_Wild_Do_Table", S),
    ("Replicate_Wild_Ignore_Table", S),
    ("Last_Errno", L),
    ("Last_Error", S),
    ("Skip_Counter", L),
    ("Exec_Master_Log_Pos", LL),
    ("Relay_Log_Space", LL),
    ("Until_Condition", S),
    ("Until_Log_File", S),
    ("Until_Log_Pos", LL),
    ("Master_SSL_Allowed", S),
    ("Master_SSL_CA_File", S),
    ("Master_SSL_CA_Path", S),
    ("Master_SSL_Cert", S),
    ("Master_SSL_Cipher", S),
    ("Master_SSL_Key", S),
    ("Seconds_Behind_Master", LL),
    ("Master_SSL_Verify_Server_Cert", S),
    ("Last_IO_Errno", L),
    ("Last_IO_Error", S),
    ("Last_SQL_Errno", L),
    ("Last_SQL_Error", S),
    ("Replicate_Ignore_Server_Ids", S),
    ("Master_Server_Id", L),
    ("Master_SSL_Crl", S),
    ("Master_SSL_Crlpath", S),
    ("Using_Gtid", S),
    ("Gtid_IO_Pos", S),
    ("Replicate_Do_Domain_Ids", S),
    ("Replicate_Ignore_Domain_Ids", S),
    ("Parallel_Mode", S),
    ("SQL_Delay", L),
    ("SQL_Remaining_Delay", L),
    ("Slave_SQL_Running_State", S),
    ("Slave_DDL_Groups", LL),
    ("Slave_Non_Transactional_Groups", LL),
    ("Slave_Transactional_Groups", LL),
    ("Replicate_Rewrite_DB", S),
];
/// SHOW ALL SLAVES STATUS: two columns before and six after SHOW SLAVE STATUS's.
const ALL_SLAVES_FIRST: &[(&str, FieldType)] = &[("Connection_name", S), ("Slave_SQL_State", S)];
const ALL_SLAVES_LAST: &[(&str, FieldType)] = &[
    ("Retried_transactions", L),
    ("Max_relay_log_size", LL),
    ("Executed_log_entries", L),
    ("Slave_received_heartbeats", L),
    ("Slave_heartbeat_period", D),
    ("Gtid_Slave_Pos", S),
];

/// The empty answer to SHOW SLAVE STATUS, or with `all` to SHOW ALL SLAVES STATUS.
pub(crate) fn show_slave_status(all: bool, sink: &mut dyn RowSink) -> Result<Outcome> {
    let cols: Vec<(&str, FieldType)> = if all {
        ALL_SLAVES_FIRST
            .iter()
            .chain(SLAVE_STATUS)
            .chain(ALL_SLAVES_LAST)
            .copied()
            .collect()
    } else {
        SLAVE_STATUS.to_vec()
    };
    send_table(sink, &cols, Vec::new())
}
