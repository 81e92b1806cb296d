// The reference JS client of gateway_bench.py: Node's socket.io-client reading the firehose.
//
// Run: node firehose_client.js URL TOKEN COUNT
// Prints "connected" once the default namespace is connected, then "done COUNT" when an
// onAny handler has counted COUNT events. It exits when its standard input closes.
"use strict";

const { io } = require("socket.io-client");

const [url, token, countText] = process.argv.slice(2);
const count = Number(countText);
let seen = 0;

const socket = io(url, { transports: ["websocket"], auth: { token }, reconnection: false });
socket.on("connect", () => console.log("connected"));
socket.on("connect_error", (err) => {
  console.log(`error ${err.message}`);
  process.exit(1);
});
socket.onAny(() => {
  seen += 1;
  if (seen === count) {
    console.log(`done ${seen}`);
  }
});
process.stdin.on("data", () => {});
process.stdin.on("end", () => {
  socket.close();
  process.exit(0);
});
