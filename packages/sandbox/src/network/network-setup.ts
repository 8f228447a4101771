import type { Logger } from "pino";
import type { NetworkSetting } from "../config.ts";
import type { ContainerCreateOptions, ContainerEngine } from "../engine/container-engine.ts";
import { EgressProxy } from "./egress-proxy.ts";
import { type NetworkPolicy, resolveNetworkPolicy } from "./network-policy.ts";
import { type SessionNetwork, sessionNetworkSettings } from "./session-network.ts";

/**
 * What a sandbox manager holds for `network: "restricted"` or an allow-list: one egress proxy, started
 * with the first session, and one internal network per session. For "none" and "full" every method
 * is a no-op and `attach` gives undefined. Constructing it validates the allow-list (SandboxConfigError).
 */
export class SessionNetworking {
  readonly policy: NetworkPolicy | undefined;
  private readonly options: { managerId: string; logger?: Logger };
  private proxy: Promise<EgressProxy> | undefined;
  private readonly detaching = new Set<Promise<void>>();

  constructor(setting: NetworkSetting, options: { managerId: string; logger?: Logger }) {
    this.policy = resolveNetworkPolicy(setting);
    this.options = options;
  }

  /**
   * A new session's internal network with the proxy on it, or undefined when the setting needs no
   * proxy. Throws NetworkSetupError when the proxy or the network cannot be set up.
   */
  async attach(
    docker: ContainerEngine,
    options: { sessionId: string; logger?: Logger },
  ): Promise<SessionNetwork | undefined> {
    if (!this.policy) return undefined;
    const policy = this.policy;
    this.proxy ??= EgressProxy.start({
      docker,
      policy,
      managerId: this.options.managerId,
      ...(this.options.logger ? { logger: this.options.logger } : {}),
    }).catch((error: unknown) => {
      this.proxy = undefined;
      throw error;
    });
    const proxy = await this.proxy;
    return proxy.attachSession({
      sessionId: options.sessionId,
      ...((options.logger ?? this.options.logger) ? { logger: options.logger ?? this.options.logger } : {}),
    });
  }

  /** Removes a session's network (call after its container is removed). */
  async detach(network: SessionNetwork | undefined): Promise<void> {
    if (!network || !this.proxy) return;
    const proxying = this.proxy;
    const detaching = (async () => {
      const proxy = await proxying.catch(() => undefined);
      await proxy?.detachSession(network);
    })();
    this.detaching.add(detaching);
    try {
      await detaching;
    } finally {
      this.detaching.delete(detaching);
    }
  }

  /** Stops the proxy and removes every session network left (a later `attach` starts a new proxy). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.detaching]);
    const proxy = await this.proxy?.catch(() => undefined);
    this.proxy = undefined;
    await proxy?.close();
  }
}

/**
 * Puts a sandbox container's create options on its session network: the network, its fixed address,
 * the proxy variables and quick-failing DNS. Returns the same object. A no-op without a network.
 */
export function applySessionNetwork(
  spec: ContainerCreateOptions,
  network: SessionNetwork | undefined,
): ContainerCreateOptions {
  if (!network) return spec;
  const settings = sessionNetworkSettings(network);
  spec.NetworkDisabled = false;
  spec.NetworkingConfig = settings.networkingConfig;
  spec.HostConfig = {
    ...spec.HostConfig,
    NetworkMode: settings.networkMode,
    DnsOptions: settings.dnsOptions,
  };
  const environment = Object.entries(settings.environment).map(([key, value]) => `${key}=${value}`);
  const keys = new Set(Object.keys(settings.environment));
  spec.Env = [...(spec.Env ?? []).filter((entry) => !keys.has(entry.split("=")[0] ?? "")), ...environment];
  return spec;
}
