"""The way out of a `--network proxy` run: listens on the sandbox's loopback, port 3128
(which HTTP_PROXY and HTTPS_PROXY name), and passes each connection through the Unix
socket /sandbox/proxy.sock to ml2b, which relays it to the allowlisting proxy (squid) and
records it. The sandbox has no other interface than its loopback: nothing else leads out.

    python relay.py PROGRAM ARGS...

binds the port, starts the relay in a child process of its own (its output discarded),
then executes PROGRAM (the harness) in its place, so the harness's output is the run's,
as without a proxy. The relay ends with the run: the sandbox kills every process of it.
"""

import os
import socket
import sys
import threading

SOCKET = "/sandbox/proxy.sock"
PORT = 3128


def pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def serve(conn: socket.socket) -> None:
    up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        up.connect(SOCKET)
    except OSError:
        conn.close()
        return
    back = threading.Thread(target=pump, args=(up, conn), daemon=True)
    back.start()
    pump(conn, up)
    back.join()
    conn.close()
    up.close()


def relay(server: socket.socket) -> None:
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    while True:
        conn, _ = server.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


def main() -> None:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", PORT))
    server.listen(128)
    if os.fork() == 0:
        try:
            relay(server)
        finally:
            os._exit(0)
    server.close()
    os.execv(sys.argv[1], sys.argv[1:])


if __name__ == "__main__":
    main()
