// Where a profile's frame lives, shared by profile-summary.mjs and heap-profile-summary.mjs: a gatelog
// source file (src/…), a package (by name), or node itself (node:…).
export function fileOf(url) {
  if (!url) return '(native)';
  if (url.startsWith('node:')) return url;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  const own = /dist\/(src\/.*)$/.exec(url);
  return own ? own[1] : url.split('/').slice(-2).join('/');
}
