// The test host page's script: embeds the view the way a host does, with
// the ext-apps SDK's host side (AppBridge over PostMessageTransport) and a
// sandboxed iframe. Requests the view sends to the server (tools/call,
// resources/read) go to window.hostCall, which browser.mjs exposes and
// forwards to a real stac-mcp over stdio.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

window.hostLog = [];
window.startHost = async ({ html, tool, input, result, resultFirst }) => {
  const received = performance.timeOrigin + performance.now(); // the HTML from resources/read reached the host
  const iframe = document.createElement("iframe");
  // No allow-same-origin: the view runs in an opaque origin, as in a
  // sandboxing host; its own CSP meta forbids connections.
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.style.cssText = "width:1000px;height:580px;border:1px solid #888;display:block";
  document.body.append(iframe);
  const bridge = new AppBridge(
    null,
    { name: "stac-mcp-test-host", version: "1" },
    { serverTools: {}, serverResources: {}, updateModelContext: { text: {} }, logging: {} },
    { hostContext: { toolInfo: { tool }, theme: "light", displayMode: "inline", availableDisplayModes: ["inline"], platform: "web", containerDimensions: { width: 1000, height: 580 } } },
  );
  bridge.oncalltool = async (params) => {
    window.hostLog.push({ method: "tools/call", params });
    return window.hostCall("tools/call", params);
  };
  bridge.onreadresource = async (params) => {
    window.hostLog.push({ method: "resources/read", params });
    return window.hostCall("resources/read", params);
  };
  bridge.onupdatemodelcontext = async (params) => {
    window.hostLog.push({ method: "ui/update-model-context", params });
    return {};
  };
  bridge.oninitialized = async () => {
    window.hostLog.push({ method: "ui/notifications/initialized" });
    if (resultFirst) {
      // Against the spec's order, to check the view waits for the arguments.
      await bridge.sendToolResult(result);
      await new Promise((r) => setTimeout(r, 300));
      await bridge.sendToolInput({ arguments: input });
      return;
    }
    await bridge.sendToolInput({ arguments: input });
    await bridge.sendToolResult(result);
  };
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = html;
  window.bridge = bridge;
  return received;
};
