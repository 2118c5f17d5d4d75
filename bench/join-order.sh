#!/bin/bash
# A 3-table join on 100k / 1k / 10 rows against a server on port $1: EXPLAIN, the
# query's wall time three times (through the mariadb client, its start included).
# Usage: bench/join-order.sh PORT (bench/results/join-order.md).
P=$1
M="mariadb -h127.0.0.1 -P$P -uroot"
$M -e "DROP DATABASE IF EXISTS timing; CREATE DATABASE timing; USE timing;
CREATE TABLE big (id INT PRIMARY KEY, s INT, pad VARCHAR(20), KEY s (s));
CREATE TABLE mid (id INT PRIMARY KEY, b INT, KEY b (b));
CREATE TABLE small (id INT PRIMARY KEY, x INT);
INSERT INTO big SELECT seq, seq % 1000, 'xxxxxxxxxx' FROM seq_1_to_100000;
INSERT INTO mid SELECT seq, seq % 1000 FROM seq_1_to_1000;
INSERT INTO small SELECT seq, seq % 3 FROM seq_1_to_10;"
Q="SELECT COUNT(*) FROM big JOIN mid ON mid.b = big.s JOIN small ON small.id = big.s WHERE small.x = 1"
$M timing -e "EXPLAIN $Q"
for i in 1 2 3; do
  s=$(date +%s.%N); $M timing -N -e "$Q" >/dev/null; e=$(date +%s.%N)
  echo "run $i: $(echo "$e - $s" | bc) s"
done
$M timing -e "$Q"
