/**
 * Which addresses a provider base_url an organization registered may reach (docs/api.md "Providers"):
 * any key may register a base_url, so without a bound any key could read the gatelog host's own
 * services back through it. GATELOG_UPSTREAM_PRIVATE_ADDRESSES=deny refuses loopback, link-local,
 * private and unspecified addresses; the cloud metadata address is refused either way. Addresses in
 * GATELOG_UPSTREAM_ALLOWED_ADDRESSES are always allowed (a model server on the local network).
 *
 * The address checked is the one connected to: a literal host as it is, a name as DNS answers it when
 * the connection is made (lookup below), so a name that resolves — or comes to resolve — to 127.0.0.1
 * is refused as 127.0.0.1 is. Node's BlockList matches IPv4-mapped IPv6 addresses against IPv4 ranges.
 */
import dns from 'node:dns';
import net from 'node:net';
import { buildConnector } from 'undici';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';

type Family = 'ipv4' | 'ipv6';
type Range = readonly [address: string, prefix: number, family: Family];

/** AWS, GCP and Azure answer instance credentials there. */
const METADATA: readonly Range[] = [
  ['169.254.169.254', 32, 'ipv4'],
  ['fd00:ec2::254', 128, 'ipv6'],
];

/** What each refused kind of address is called in a refusal, and its ranges. */
const DENIED_KINDS: readonly (readonly [kind: string, ranges: readonly Range[]])[] = [
  [
    'a loopback address',
    [
      ['127.0.0.0', 8, 'ipv4'],
      ['::1', 128, 'ipv6'],
    ],
  ],
  [
    'an unspecified address',
    [
      // 0.0.0.0 reaches the host itself on Linux; ::/96 holds :: and the IPv4-compatible addresses.
      ['0.0.0.0', 8, 'ipv4'],
      ['::', 96, 'ipv6'],
    ],
  ],
  [
    'a link-local address',
    [
      ['169.254.0.0', 16, 'ipv4'],
      ['fe80::', 10, 'ipv6'],
    ],
  ],
  [
    'a private address',
    [
      ['10.0.0.0', 8, 'ipv4'],
      ['172.16.0.0', 12, 'ipv4'],
      ['192.168.0.0', 16, 'ipv4'],
      // Carrier-grade NAT space, where some clouds keep internal services.
      ['100.64.0.0', 10, 'ipv4'],
      ['fc00::', 7, 'ipv6'],
    ],
  ],
];

function blockList(ranges: readonly Range[]): net.BlockList {
  const list = new net.BlockList();
  for (const [address, prefix, family] of ranges) list.addSubnet(address, prefix, family);
  return list;
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

export class AddressPolicy {
  private readonly allowed: net.BlockList;
  private readonly metadata = blockList(METADATA);
  private readonly denied: readonly (readonly [string, net.BlockList])[];

  constructor(config: Pick<Config, 'upstreamPrivateAddresses' | 'upstreamAllowedAddresses'>) {
    this.allowed = blockList(config.upstreamAllowedAddresses.map((r) => [r.address, r.prefix, r.family] as const));
    this.denied =
      config.upstreamPrivateAddresses === 'deny'
        ? DENIED_KINDS.map(([kind, ranges]) => [kind, blockList(ranges)] as const)
        : [];
  }

  /** Why this address may not be reached (`a loopback address`…), or null when it may. */
  refusal(address: string): string | null {
    const family: Family = net.isIPv6(address) ? 'ipv6' : 'ipv4';
    if (this.allowed.check(address, family)) return null;
    if (this.metadata.check(address, family)) return 'the cloud metadata address';
    for (const [kind, list] of this.denied) if (list.check(address, family)) return kind;
    return null;
  }

  /**
   * Each base URL's verdict, kept: every proxied call asks again for its provider's, and parsing the URL
   * and walking the block lists cost more than the rest of the call's planning. Bounded, as base URLs
   * come from registered keys and customer credentials.
   */
  private readonly literalVerdicts = new Map<string, { host: string; why: string } | null>();

  /** The 400 for a base_url whose host is a refused address literal; null for a name or an allowed address. */
  literalRefusal(baseUrl: string, param: string | null): AppError | null {
    let verdict = this.literalVerdicts.get(baseUrl);
    if (verdict === undefined) {
      const host = hostOf(baseUrl);
      const why = net.isIP(host) === 0 ? null : this.refusal(host);
      verdict = why === null ? null : { host, why };
      if (this.literalVerdicts.size >= 1000) this.literalVerdicts.clear();
      this.literalVerdicts.set(baseUrl, verdict);
    }
    return verdict === null ? null : refused(verdict.host, verdict.host, verdict.why, param);
  }

  /**
   * A `lookup` for net.connect: DNS as usual, then every address it gave checked — one refused address
   * refuses the connection, so a name cannot mix a public address with an internal one.
   */
  readonly lookup = (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) {
        callback(err, []);
        return;
      }
      for (const { address } of addresses) {
        const why = this.refusal(address);
        if (why !== null) {
          callback(refused(hostname, address, why, 'base_url') as unknown as NodeJS.ErrnoException, []);
          return;
        }
      }
      if (options.all === true) callback(null, addresses);
      else callback(null, addresses[0].address, addresses[0].family);
    });
  };

  /**
   * An undici connector for an organization's origin: a refused address literal fails at once (Node
   * calls no lookup for one), a name connects through `lookup`.
   */
  connector(): buildConnector.connector {
    const connect = buildConnector({ lookup: this.lookup });
    return (options, callback) => {
      const host = options.hostname.replace(/^\[|\]$/g, '');
      const why = net.isIP(host) === 0 ? null : this.refusal(host);
      if (why === null) {
        connect(options, callback);
        return;
      }
      const error = refused(host, host, why, 'base_url');
      queueMicrotask(() => callback(error, null));
    };
  }
}

/** The host of a URL without an IPv6 literal's brackets. */
export function hostOf(url: string): string {
  return new URL(url).hostname.replace(/^\[|\]$/g, '');
}

/** The refusal of a provider's address, the same at registration and when connecting. */
export function refused(host: string, address: string, why: string, param: string | null): AppError {
  const where = host === address ? `address ${address} is ${why}` : `host '${host}' resolved to ${address}, ${why}`;
  const setting =
    why === 'the cloud metadata address'
      ? 'list it in GATELOG_UPSTREAM_ALLOWED_ADDRESSES to allow it'
      : 'GATELOG_UPSTREAM_PRIVATE_ADDRESSES=deny; list it in GATELOG_UPSTREAM_ALLOWED_ADDRESSES to allow it';
  return new AppError(
    400,
    'upstream_address_denied',
    `The provider base_url's ${where}: this gatelog does not call such an address for an organization's ` +
      `provider (${setting}).`,
    param,
  );
}

const policies = new WeakMap<Config, AddressPolicy>();

/** The policy of a configuration, built once. */
export function addressPolicyOf(config: Config): AddressPolicy {
  let policy = policies.get(config);
  if (policy === undefined) {
    policy = new AddressPolicy(config);
    policies.set(config, policy);
  }
  return policy;
}
