import dns from "node:dns";
import { BlockList, isIP, type LookupFunction } from "node:net";
import { invalidInput } from "@/lib/domain-errors";

// Server-side request forgery: an account must not make the service POST to the machine itself, its private
// network or a cloud metadata address. Endpoints are https:// on public addresses, checked when registered and
// again at every connection (the address checked is the one connected to, so a name re-pointed later is caught).
// WEBHOOKS_ALLOW_PRIVATE=1 lifts both (tests, a receiver on the same private network).

const NOT_PUBLIC = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8], // "this" network
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, cloud metadata
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
] as const) {
  NOT_PUBLIC.addSubnet(net, prefix, "ipv4");
}
for (const [net, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["64:ff9b::", 96], // NAT64 of any IPv4 address
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["ff00::", 8], // multicast
] as const) {
  NOT_PUBLIC.addSubnet(net, prefix, "ipv6");
}

/** Loopback, private, link-local, multicast or reserved (IPv4-mapped IPv6 addresses count as their IPv4 one). */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  return NOT_PUBLIC.check(address, family === 6 ? "ipv6" : "ipv4");
}

export const MAX_WEBHOOK_URL_LENGTH = 2000;

/** The URL an owner typed, checked for its form: https:// (http:// only when private addresses are allowed), no credentials. */
export function parseWebhookUrl(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw invalidInput("url", "must be an absolute URL, e.g. https://clinic.example/hooks/rhinarium");
  }
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) throw invalidInput("url", `at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:")) throw invalidInput("url", "must start with https://");
  if (url.username || url.password) throw invalidInput("url", "must not hold a user name or password");
  if (url.hash) throw invalidInput("url", "must not hold a #fragment");
  return url;
}

function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, "$1");
}

/** Registration's check: the host resolves, and (unless allowed) only to public addresses. */
export async function assertReachableHost(url: URL, allowPrivate: boolean): Promise<void> {
  const host = hostOf(url);
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await dns.promises.lookup(host, { all: true })).map((a) => a.address);
    } catch {
      throw invalidInput("url", `the host ${host} does not resolve`);
    }
  }
  if (!allowPrivate && addresses.some(isPrivateAddress)) {
    throw invalidInput("url", `the host ${host} resolves to a loopback, private or link-local address`);
  }
}

export class PrivateAddressRefused extends Error {
  constructor(host: string, address: string) {
    super(`refused: ${host} resolves to the non-public address ${address}`);
  }
}

/** An IP-literal host is connected to without a lookup: checked here, before the request. */
export function assertPublicLiteral(url: URL, allowPrivate: boolean): void {
  const host = hostOf(url);
  if (!allowPrivate && isIP(host) && isPrivateAddress(host)) throw new PrivateAddressRefused(host, host);
}

/** A `lookup` for http(s).request that refuses to connect to a non-public address (unless allowed). */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, "", 4);
      const list = addresses as dns.LookupAddress[];
      const refused = allowPrivate ? undefined : list.find((a) => isPrivateAddress(a.address));
      if (refused) return callback(new PrivateAddressRefused(hostname, refused.address), "", 4);
      if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
      return callback(null, list[0].address, list[0].family);
    });
  };
}
