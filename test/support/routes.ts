/** The routes an app serves, as the tests that compare them with the docs and the OpenAPI document see them. */

/** "METHOD /path/{param}" for every route, from Fastify's own route tree. */
export function servedRoutes(tree: string): Set<string> {
  const routes = new Set<string>();
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^([│ ]*)[├└]── (\S+) \(([^)]+)\)$/.exec(line);
    if (!match) continue;
    const depth = match[1].length / 4;
    stack.length = depth;
    stack.push(match[2]);
    const route = stack.join('').replace(/:(\w+)/g, '{$1}');
    for (const method of match[3].split(', ')) if (method !== 'HEAD') routes.add(`${method} ${route}`);
  }
  return routes;
}
