import type { Endpoint, HttpMethod } from "./endpoint";

// Next's file router cannot express "/v2/pets/{petId}:verify" (a verb glued to a segment), so
// /v2 has one catch-all route and this table matches method + path against the contract templates.

interface CompiledRoute {
  endpoint: Endpoint;
  route: string;
  pattern: RegExp;
  paramNames: string[];
}

export interface RouteMatch {
  endpoint: Endpoint;
  /** How usage names the operation: method and contract template, e.g. "GET /v2/pets/{petId}". */
  route: string;
  params: Record<string, string>;
}

function compile(endpoint: Endpoint): CompiledRoute {
  const paramNames: string[] = [];
  const source = endpoint.path
    .split(/(\{[A-Za-z]+\})/)
    .map((part) => {
      const param = /^\{([A-Za-z]+)\}$/.exec(part);
      if (!param) return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      paramNames.push(param[1]);
      // A parameter never contains "/" or ":", so "/v2/pets/abc:verify" splits unambiguously.
      return "([^/:]+)";
    })
    .join("");
  return { endpoint, route: `${endpoint.method} ${endpoint.path}`, pattern: new RegExp(`^${source}$`), paramNames };
}

/** A malformed escape (e.g. "%E0") is kept as typed: it then names no resource (404), not a 500. */
function decodeOrRaw(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

export function createRouter(endpoints: Endpoint[]) {
  const routes = endpoints.map(compile);
  return {
    match(method: string, pathname: string): RouteMatch | null {
      for (const route of routes) {
        if (route.endpoint.method !== (method as HttpMethod)) continue;
        const m = route.pattern.exec(pathname);
        if (!m) continue;
        const params: Record<string, string> = {};
        route.paramNames.forEach((name, i) => {
          params[name] = decodeOrRaw(m[i + 1]);
        });
        return { endpoint: route.endpoint, route: route.route, params };
      }
      return null;
    },
  };
}
