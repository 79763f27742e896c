/**
 * Handles on a running plugin, for its owner (createServer, `callscript serve`): a config
 * reload's new routes, a reload of the flows, the traffic the metrics counted. The owner
 * makes one and passes it as the plugin's `control` option; the plugin attaches its handles
 * at registration. Before that (or with no plugin), the calls say so.
 */
import type { Routes } from '../engine/ports.js';
import type { ReloadSummary } from '../registry/reloader.js';
import type { TrafficSource } from './metrics.js';

export interface ControlHandles {
  setRoutes(routes: Routes): void;
  reload(reason: string): Promise<ReloadSummary>;
  /** The traffic of each flow's transitions, from the metrics (absent with `metrics: false`). */
  traffic?: TrafficSource;
}

export class PluginControl {
  private handles: ControlHandles | undefined;

  /** Called by the plugin once registered. */
  attach(handles: ControlHandles): void {
    this.handles = handles;
  }

  /** New routes (a config reload); live calls are not affected. */
  setRoutes(routes: Routes): void {
    this.attached().setRoutes(routes);
  }

  /** Reloads the flows (file changes, SIGHUP, the admin API). */
  reload(reason: string): Promise<ReloadSummary> {
    return this.attached().reload(reason);
  }

  get traffic(): TrafficSource | undefined {
    return this.handles?.traffic;
  }

  private attached(): ControlHandles {
    if (!this.handles) throw new Error('callscript plugin: control used before the plugin was registered');
    return this.handles;
  }
}
