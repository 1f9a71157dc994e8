// A logging HTTP proxy for evidence of what crossed the wire: forwards every request to TARGET
// unchanged (method, path, headers, body), streams the answer back unchanged (status, headers,
// body, SSE as it arrives), and appends one JSON line per exchange to LOG:
//   {"at", "method", "path", "request": {"headers", "body"}, "response": {"status", "headers", "body"}}
// Bodies are parsed as JSON where they are JSON; an SSE body is logged as the list of its data
// events. Only Node's standard library.
//
// usage: node wire-proxy.mjs LISTEN_PORT TARGET_ORIGIN LOG     (e.g. 0 http://127.0.0.1:8080 wire.jsonl)
// Prints "wire-proxy listening on PORT" once it accepts connections.
import http from "node:http";
import fs from "node:fs";

const [port, target, logFile] = process.argv.slice(2);
if (!port || !target || !logFile) {
  console.error("usage: node wire-proxy.mjs LISTEN_PORT TARGET_ORIGIN LOG");
  process.exit(2);
}
const origin = new URL(target);
const log = fs.createWriteStream(logFile, { flags: "a" });

// Headers worth keeping in the log: the MCP ones and those that say how a body is framed.
const kept = (headers) =>
  Object.fromEntries(
    Object.entries(headers).filter(([k]) => /^(mcp-|content-type$|accept$|mcp-session-id$|last-event-id$)/i.test(k)),
  );

function parseBody(text, contentType = "") {
  if (text === "") return undefined;
  if (contentType.includes("text/event-stream")) {
    return text
      .split(/\r?\n\r?\n/)
      .map((event) =>
        event
          .split(/\r?\n/)
          .filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5).trimStart())
          .join("\n"),
      )
      .filter((d) => d !== "")
      .map((d) => {
        try {
          return JSON.parse(d);
        } catch {
          return d;
        }
      });
  }
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const server = http.createServer((req, res) => {
  const reqChunks = [];
  req.on("data", (c) => reqChunks.push(c));
  req.on("end", () => {
    const reqBody = Buffer.concat(reqChunks);
    const headers = { ...req.headers, host: origin.host };
    const up = http.request(
      { hostname: origin.hostname, port: origin.port, path: req.url, method: req.method, headers },
      (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        const resChunks = [];
        upRes.on("data", (c) => {
          resChunks.push(c);
          res.write(c);
        });
        upRes.on("end", () => {
          res.end();
          const text = Buffer.concat(resChunks).toString("utf8");
          log.write(
            JSON.stringify({
              at: new Date().toISOString(),
              method: req.method,
              path: req.url,
              request: { headers: kept(req.headers), body: parseBody(reqBody.toString("utf8"), req.headers["content-type"]) },
              response: { status: upRes.statusCode, headers: kept(upRes.headers), body: parseBody(text, upRes.headers["content-type"]) },
            }) + "\n",
          );
        });
        upRes.on("error", () => res.destroy());
      },
    );
    up.on("error", (err) => {
      log.write(JSON.stringify({ at: new Date().toISOString(), method: req.method, path: req.url, error: String(err) }) + "\n");
      res.writeHead(502, { "content-type": "text/plain" });
      res.end(`wire-proxy: ${err}`);
    });
    // A client that goes away mid-answer is passed on, so the server sees the abandoned request.
    res.on("close", () => {
      if (!res.writableFinished) up.destroy();
    });
    up.end(reqBody);
  });
});
server.listen(Number(port), "127.0.0.1", () => {
  console.log(`wire-proxy listening on ${server.address().port}`);
});
