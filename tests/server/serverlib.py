"""What the server scripts share: a free port, and a `quire serve` started on a private
data directory and waited for until it accepts connections."""
import socket
import subprocess
import time

import pymysql


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def start_quire(quire, data, port, log, sets=("innodb_buffer_pool_size=16M",
                                             "innodb_log_file_size=16M")):
    """`quire serve` with each `--set` of `sets`, once it accepts a root login."""
    cmd = [quire, "serve", "--data-dir", data, "--port", str(port)]
    for s in sets:
        cmd += ["--set", s]
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 120
    while time.time() < deadline:
        if p.poll() is not None:
            raise RuntimeError("quire serve exited with %s" % p.returncode)
        try:
            pymysql.connect(host="127.0.0.1", port=port, user="root").close()
            return p
        except pymysql.err.MySQLError:
            time.sleep(0.2)
    raise RuntimeError("quire serve did not accept connections")
