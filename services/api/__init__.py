"""The API's routers, one per resource (games, experiments, results, downloads, operations),
with the shared checks as dependencies (services.api.deps) and one error model
(services.api.errors).  services.app assembles them."""
