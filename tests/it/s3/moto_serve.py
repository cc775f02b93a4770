"""An S3-compatible server for ml2b's tests: moto's application behind werkzeug on
127.0.0.1, every request served under one lock.

moto checks `If-None-Match: *` on PutObject and then stores the object as two separate
steps, with no lock between them, and its stock server (`moto_server`) runs each request on
a thread of its own: two racing create-if-absent PUTs of one key can then both succeed,
which real S3 never allows. Serialising the application makes the check and the store one
step, so the race tests exercise ml2b's protocol, not moto's race. Connections are still
accepted on threads (an idle keep-alive connection blocks nobody).

Usage: python moto_serve.py [PORT [PARENT_PID [ADDRESS]]]   (port 0, the default: any free
port; ADDRESS, 127.0.0.1 by default, the address to listen on: the Slurm tests give the
host's address on the cluster's network, which the compute nodes reach). The bound port is printed on the first line of stdout once the server listens; SIGTERM stops
it, and so does the end of PARENT_PID (a test binary killed before it could stop us).
"""

import os
import signal
import sys
import threading
import time

from werkzeug.serving import make_server

from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)


def serialised(app):
    lock = threading.Lock()

    def call(environ, start_response):
        with lock:
            # The whole body is produced under the lock: moto's work happens inside.
            return list(app(environ, start_response))

    return call


def exit_with(parent):
    while os.getppid() == parent:
        time.sleep(1)
    os._exit(0)


def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    if len(sys.argv) > 2:
        threading.Thread(target=exit_with, args=(int(sys.argv[2]),), daemon=True).start()
    address = sys.argv[3] if len(sys.argv) > 3 else "127.0.0.1"
    app = serialised(DomainDispatcherApplication(create_backend_app))
    server = make_server(
        address, port, app, threaded=True, request_handler=MotoRequestHandler
    )
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
