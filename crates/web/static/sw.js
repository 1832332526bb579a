// Exhale's service worker: an installed Exhale that cannot reach its server shows a plain
// "you are offline" page instead of the browser's error. It keeps nothing personal: only that
// page (the same for everyone, with no one's data), the stylesheet and the icon. Every other
// request goes to the network as if there were no worker, and nothing a page or the API
// answers is ever stored.
"use strict";
const CACHE = "exhale-offline-{version}";
const KEPT = ["/offline", "/static/app.css", "/static/icon.svg"];

// Fetched without the session's cookies: what is kept is what anyone gets, never a page
// with a person's name or one-time notice in it.
self.addEventListener("install", (event) => {
  const requests = KEPT.map((path) => new Request(path, { credentials: "omit" }));
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(requests)).then(() => self.skipWaiting()));
});

// A new version's cache replaces the old ones.
self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches.keys()
      .then((names) => Promise.all(names.filter((name) => name !== CACHE).map((name) => caches.delete(name))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  if (request.mode === "navigate") {
    event.respondWith(fetch(request).catch(() => caches.match("/offline")));
    return;
  }
  const path = new URL(request.url).pathname;
  if (KEPT.includes(path)) {
    event.respondWith(fetch(request).catch(() => caches.match(path)));
  }
});
