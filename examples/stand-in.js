#!/usr/bin/env node
// The README walkthrough's stand-in for a third party: an HTTP server that answers every request with what it
// received (method, path, authorization header, body) as JSON.
//
//   node examples/stand-in.js               starts it in the background and returns once it listens, printing
//                                           {"host":"127.0.0.1:<port>","pid":<pid>}; stop it with kill <pid>
//   node examples/stand-in.js --foreground  serves in this process (docker-compose.yml's stand-in service)
//
// STANDIN_PORT (default 0: a free port the system picks, so it never meets another program's server) and
// STANDIN_ADDRESS (default 127.0.0.1) say where it listens. When it cannot listen there it says why and exits 1,
// printing no host: a walkthrough that reads the host from it sends nothing to a server it did not start.
'use strict';
const { fork } = require('node:child_process');
const { createServer } = require('node:http');

const port = process.env.STANDIN_PORT ?? '0';
const address = process.env.STANDIN_ADDRESS ?? '127.0.0.1';

function fail(message) {
  console.error(`stand-in: ${message}`);
  process.exit(1);
}

if (!/^\d{1,5}$/.test(port) || Number(port) > 65535)
  fail(`STANDIN_PORT must be a port number (0-65535), got "${port}"`);

if (process.argv[2] === '--foreground') serve();
else startInBackground();

function serve() {
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const { method, url, headers } = request;
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ method, url, authorization: headers.authorization, body }));
    });
  });
  server.once('error', (error) => {
    const why = error.code === 'EADDRINUSE' ? 'another program listens there' : error.message;
    const message = `cannot listen on ${address}:${port}: ${why}. Leave STANDIN_PORT unset for a free port.`;
    if (process.send) process.send({ error: message }, () => process.exit(1));
    else fail(message);
  });
  server.listen(Number(port), address, () => {
    const listening = { host: `${address}:${server.address().port}`, pid: process.pid };
    if (process.send) {
      process.send(listening);
      process.disconnect();
    } else console.log(JSON.stringify(listening));
  });
}

// A child of its own, detached, with nothing of this process's stdout: `$(node examples/stand-in.js)` returns once
// the child says where it listens, and the child outlives this process (and the terminal's Ctrl-C).
function startInBackground() {
  const child = fork(__filename, ['--foreground'], { detached: true, stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
  child.once('message', (message) => {
    if (message.error) fail(message.error);
    child.removeAllListeners('exit');
    console.log(JSON.stringify(message));
    child.disconnect();
    child.unref();
  });
  child.once('exit', (code, signal) => fail(`stopped before it listened (${signal ?? `exit code ${code}`})`));
}
