// Test-only stand-in for ssh (see harness.ts serveSsh): `fake-ssh.ts <port> [ssh options] <host> <command>`.
// Sends "<service> <GIT_PROTOCOL>\n" to the harness, then relays stdin and stdout.
import { connect } from "node:net";

const port = Number(process.argv[2]);
const command = process.argv[process.argv.length - 1]!;
const service = command.startsWith("git-receive-pack") ? "git-receive-pack" : "git-upload-pack";
const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: true }, () => {
  socket.write(`${service} ${process.env.GIT_PROTOCOL ?? ""}\n`);
  process.stdin.pipe(socket);
});
socket.pipe(process.stdout);
socket.on("end", () => process.stdout.end());
socket.on("error", (e) => {
  console.error(`fake-ssh: ${e.message}`);
  process.exit(255);
});
