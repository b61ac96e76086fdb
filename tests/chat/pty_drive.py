"""Runs a program in a pseudo-terminal and plays a script against it, like a person typing
(tests/it/chat_repl.rs drives `mira chat` with it).

argv: SCRIPT_JSON PROGRAM ARGS... — the script is a list of steps:
  {"send": "text"}              bytes typed (\r is Enter, \x03 Ctrl+C, \x04 Ctrl+D, \t Tab)
  {"expect": "regex", "timeout": s}  wait until the screen text since the last expect matches
  {"exit": code}                wait for the program to exit with this code
Prints the whole transcript (ANSI escapes removed) to stdout; exits 1 with the transcript
and the failing step on stderr when a step fails.
"""

import fcntl
import json
import os
import pty
import re
import select
import struct
import sys
import termios
import time

ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\x1b[=>]|\r")


def main():
    script = json.loads(sys.argv[1])
    argv = sys.argv[2:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(argv[0], argv)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    raw = b""
    mark = 0
    status = None

    def read(timeout):
        nonlocal raw
        r, _, _ = select.select([fd], [], [], timeout)
        if not r:
            return True
        try:
            data = os.read(fd, 65536)
        except OSError:
            return False
        if not data:
            return False
        raw += data
        return True

    def screen():
        return ANSI.sub(b"", raw).decode("utf-8", "replace")

    def fail(step, why):
        sys.stderr.write(f"pty step {step} failed: {why}\n--- transcript ---\n{screen()}\n")
        sys.exit(1)

    for step in script:
        if "send" in step:
            time.sleep(0.05)
            os.write(fd, step["send"].encode())
        elif "expect" in step:
            pattern = re.compile(step["expect"])
            deadline = time.time() + step.get("timeout", 20)
            while True:
                m = pattern.search(screen(), mark)
                if m:
                    mark = m.end()
                    break
                if time.time() > deadline:
                    fail(step, "timed out")
                if not read(0.1):
                    m = pattern.search(screen(), mark)
                    if m:
                        mark = m.end()
                        break
                    fail(step, "the program closed the terminal")
        elif "exit" in step:
            deadline = time.time() + step.get("timeout", 20)
            while True:
                done, st = os.waitpid(pid, os.WNOHANG)
                if done:
                    status = os.waitstatus_to_exitcode(st)
                    break
                if time.time() > deadline:
                    fail(step, "still running")
                read(0.1)
            while read(0.05):
                if not select.select([fd], [], [], 0)[0]:
                    break
            if status != step["exit"]:
                fail(step, f"exit code {status}")
    if status is None:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    print(screen())


main()
