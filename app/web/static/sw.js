// The service worker keeps the dashboard usable offline on the last data:
// the shell is cached when it installs, every API answer as it arrives;
// the network is always asked first, the cache only when it fails.
const CACHE = "horizon-v1";
const SHELL = ["/", "/index.html", "/app.js", "/style.css", "/manifest.webmanifest", "/icon.svg"];

self.addEventListener("install", (e) => {
  e.waitUntil(caches.open(CACHE).then((c) => c.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (e) => {
  e.waitUntil(
    caches.keys()
      .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener("fetch", (e) => {
  const req = e.request;
  if (req.method !== "GET" || new URL(req.url).origin !== self.location.origin) return;
  e.respondWith(
    fetch(req)
      .then((res) => {
        if (res.ok) {
          const copy = res.clone();
          caches.open(CACHE).then((c) => c.put(req, copy));
        }
        return res;
      })
      .catch(() => caches.match(req, { ignoreSearch: false }).then((hit) => {
        if (hit) {
          const h = new Headers(hit.headers);
          h.set("X-Horizon-Offline", "1");
          return hit.blob().then((b) => new Response(b, { status: hit.status, headers: h }));
        }
        return new Response(JSON.stringify({ error: "offline, and nothing cached yet" }), {
          status: 503, headers: { "Content-Type": "application/json" },
        });
      })),
  );
});
