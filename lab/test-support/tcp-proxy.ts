import net from "node:net";

/**
 * A TCP proxy between a process and a service (PostgreSQL, Redis), for outage tests that must not
 * stop the machine's shared services. `cut("refuse")` drops every connection and refuses new ones (a
 * stopped service); `cut("blackhole")` drops them and accepts new ones that never answer (a network
 * partition); `holdReplies(match)` stops delivering the service's bytes to the connections whose first
 * packet contains `match` (e.g. a PostgreSQL application_name): a connection that went quiet, the rest
 * of the process unaffected.
 */
export async function startTcpProxy(targetPort: number, targetHost = "127.0.0.1") {
  let mode: "open" | "refuse" | "blackhole" = "open";
  const sockets = new Set<net.Socket>();
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket; firstPacket: string }>();
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => s.destroy());
  };
  const server = net.createServer((client) => {
    track(client);
    if (mode === "refuse") return client.destroy();
    if (mode === "blackhole") return; // accepted, never answered
    const upstream = net.connect(targetPort, targetHost);
    track(upstream);
    const pair = { client, upstream, firstPacket: "" };
    pairs.add(pair);
    client.once("data", (chunk: Buffer) => (pair.firstPacket = chunk.toString("latin1")));
    client.pipe(upstream).pipe(client);
    client.on("close", () => {
      pairs.delete(pair);
      upstream.destroy();
    });
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    cut(how: "refuse" | "blackhole" = "refuse") {
      mode = how;
      for (const s of sockets) s.destroy();
    },
    restore() {
      // Since the cut every connection was refused or blackholed: none carries a live session. The
      // blackholed ones are dropped, as a healed partition would reset them.
      if (mode === "blackhole") for (const s of sockets) s.destroy();
      mode = "open";
    },
    /** Holds (buffers) what the service sends to the matching connections until the returned function is called. */
    holdReplies(match: string): () => void {
      const held = [...pairs].filter((p) => p.firstPacket.includes(match));
      for (const { upstream, client } of held) upstream.unpipe(client);
      return () => {
        for (const { upstream, client } of held) upstream.pipe(client);
      };
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
