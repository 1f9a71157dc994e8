locals {
  labels = merge(var.labels, {
    "app.kubernetes.io/name"       = "taskgate"
    "app.kubernetes.io/instance"   = var.name
    "app.kubernetes.io/managed-by" = "terraform"
  })
  selector = {
    "app.kubernetes.io/name"     = "taskgate"
    "app.kubernetes.io/instance" = var.name
  }
  namespace = var.create_namespace ? kubernetes_namespace_v1.this[0].metadata[0].name : var.namespace

  # The module's Secret: token keys (unless an existing Secret holds them), the Temporal API key and
  # the callers' API keys, each under the environment variable name it is passed as.
  secret_env = merge(
    var.token_keys == null ? {} : { TASKGATE_TOKEN_KEYS = var.token_keys },
    var.temporal_api_key == null ? {} : { TEMPORAL_API_KEY = var.temporal_api_key },
    var.restate_auth_token == null ? {} : { RESTATE_AUTH_TOKEN = var.restate_auth_token },
    var.api_keys,
  )
  token_keys_secret = var.token_keys_secret_name != null ? var.token_keys_secret_name : "${var.name}-secrets"

  # Counts and for_each may not depend on sensitive values: whether there is TLS or a secret is not
  # secret.
  has_tls        = nonsensitive(var.temporal_tls != null)
  has_secret_env = nonsensitive(length(local.secret_env) > 0)
  secret_env_names = nonsensitive(toset(concat(
    var.token_keys_secret_name == null ? [] : ["TASKGATE_TOKEN_KEYS"],
    keys(local.secret_env),
  )))

  # TLS files go into a Secret; their paths and the server name, which are not secret, into the
  # environment under the names the Temporal SDK's envconfig reads, so that `temporal: {}` (or a
  # block without tls:) connects with them (built from unmarked values only: nonsensitive() lifts
  # only a value's own mark).
  tls_dir = "/etc/taskgate/temporal"
  tls_files = local.has_tls ? {
    for key, pem in {
      "ca.crt"  = var.temporal_tls.ca_pem
      "tls.crt" = var.temporal_tls.cert_pem
      "tls.key" = var.temporal_tls.key_pem
    } : key => pem if pem != null
  } : {}
  tls_present = local.has_tls ? {
    "ca.crt"  = nonsensitive(var.temporal_tls.ca_pem != null)
    "tls.crt" = nonsensitive(var.temporal_tls.cert_pem != null)
    "tls.key" = nonsensitive(var.temporal_tls.key_pem != null)
  } : { "ca.crt" = false, "tls.crt" = false, "tls.key" = false }
  tls_server_name = local.has_tls ? nonsensitive(var.temporal_tls.server_name) : null
  tls_env = merge(
    local.tls_present["ca.crt"] ? { TEMPORAL_TLS_SERVER_CA_CERT_PATH = "${local.tls_dir}/ca.crt" } : {},
    local.tls_present["tls.crt"] ? { TEMPORAL_TLS_CLIENT_CERT_PATH = "${local.tls_dir}/tls.crt" } : {},
    local.tls_present["tls.key"] ? { TEMPORAL_TLS_CLIENT_KEY_PATH = "${local.tls_dir}/tls.key" } : {},
    local.tls_server_name == null ? {} : { TEMPORAL_TLS_SERVER_NAME = local.tls_server_name },
  )

  # A Restate server's URLs, as the driver reads them when an engine block leaves them out.
  restate_env = var.restate == null ? {} : {
    RESTATE_INGRESS_URL = var.restate.ingress_url
    RESTATE_ADMIN_URL   = var.restate.admin_url
  }

  environment = merge(
    var.environment,
    var.temporal_address == null ? {} : {
      TEMPORAL_ADDRESS   = var.temporal_address
      TEMPORAL_NAMESPACE = var.temporal_namespace
    },
    local.tls_env,
    local.restate_env,
    var.public_url == null ? {} : { TASKGATE_MCP_URL = var.public_url },
    var.stepfunctions_events_topic_arn == null ? {} : { TASKGATE_SFN_EVENTS_TOPIC_ARN = var.stepfunctions_events_topic_arn },
    var.oauth == null ? {} : merge(
      {
        TASKGATE_OAUTH_ISSUER   = var.oauth.issuer
        TASKGATE_OAUTH_AUDIENCE = var.oauth.audience
        TASKGATE_OAUTH_SCOPES   = join(" ", var.oauth.scopes)
      },
      var.oauth.jwks_url == null ? {} : { TASKGATE_OAUTH_JWKS_URL = var.oauth.jwks_url },
    ),
  )

  # Prometheus finds the metrics on the operations port, apart from MCP.
  scrape_annotations = var.prometheus_scrape ? {
    "prometheus.io/scrape" = "true"
    "prometheus.io/port"   = tostring(var.ops_port)
    "prometheus.io/path"   = "/metrics"
  } : {}

  # Pods restart when the mapping or a secret changes: these hashes are in their annotations.
  checksums = {
    "taskgate.dev/mapping-sha256" = sha256(var.mapping_yaml)
    "taskgate.dev/secrets-sha256" = nonsensitive(sha256(jsonencode([local.secret_env, local.tls_files])))
  }
}

resource "kubernetes_namespace_v1" "this" {
  count = var.create_namespace ? 1 : 0

  metadata {
    name   = var.namespace
    labels = var.labels
  }
}

resource "kubernetes_config_map_v1" "mapping" {
  metadata {
    name      = "${var.name}-mapping"
    namespace = local.namespace
    labels    = local.labels
  }

  data = {
    "tools.yaml" = var.mapping_yaml
  }
}

resource "kubernetes_secret_v1" "env" {
  count = local.has_secret_env ? 1 : 0

  metadata {
    name      = "${var.name}-secrets"
    namespace = local.namespace
    labels    = local.labels
  }

  type = "Opaque"
  data = local.secret_env
}

resource "kubernetes_secret_v1" "temporal_tls" {
  count = local.has_tls ? 1 : 0

  metadata {
    name      = "${var.name}-temporal-tls"
    namespace = local.namespace
    labels    = local.labels
  }

  type = "Opaque"
  data = local.tls_files
}

resource "kubernetes_service_account_v1" "this" {
  metadata {
    name        = var.name
    namespace   = local.namespace
    labels      = local.labels
    annotations = var.service_account_annotations
  }

  automount_service_account_token = var.automount_service_account_token
}

resource "kubernetes_deployment_v1" "this" {
  metadata {
    name      = var.name
    namespace = local.namespace
    labels    = local.labels
  }

  # The HorizontalPodAutoscaler owns the count once the Deployment exists.
  lifecycle {
    ignore_changes = [spec[0].replicas]

    precondition {
      condition     = (var.token_keys == null) != (var.token_keys_secret_name == null)
      error_message = "Set exactly one of token_keys and token_keys_secret_name."
    }
    precondition {
      condition     = var.restate_auth_token == null || var.restate_auth_token_secret_name == null
      error_message = "Set at most one of restate_auth_token and restate_auth_token_secret_name."
    }
    precondition {
      condition     = var.min_replicas >= 1 && var.min_replicas <= var.max_replicas
      error_message = "min_replicas must be at least 1 and at most max_replicas."
    }
  }

  spec {
    replicas = var.replicas

    selector {
      match_labels = local.selector
    }

    strategy {
      type = "RollingUpdate"
      rolling_update {
        max_surge       = "25%"
        max_unavailable = "0"
      }
    }

    template {
      metadata {
        labels      = local.labels
        annotations = merge(local.scrape_annotations, var.pod_annotations, local.checksums)
      }

      spec {
        service_account_name             = kubernetes_service_account_v1.this.metadata[0].name
        automount_service_account_token  = var.automount_service_account_token
        termination_grace_period_seconds = 15
        node_selector                    = var.node_selector

        dynamic "image_pull_secrets" {
          for_each = var.image_pull_secrets
          content {
            name = image_pull_secrets.value
          }
        }

        dynamic "toleration" {
          for_each = var.tolerations
          content {
            key      = toleration.value.key
            operator = toleration.value.operator
            value    = toleration.value.value
            effect   = toleration.value.effect
          }
        }

        security_context {
          run_as_non_root = true
          run_as_user     = 65532
          run_as_group    = 65532
          fs_group        = 65532
          seccomp_profile {
            type = "RuntimeDefault"
          }
        }

        container {
          name              = "taskgate"
          image             = var.image
          image_pull_policy = var.image_pull_policy
          # --replicas: every pod reads the engines at its share of the mapping's read budgets,
          # counting on as many pods as the autoscaler may run.
          args = concat(
            ["serve", "--config", "/etc/taskgate/tools.yaml", "--http", ":${var.container_port}", "--ops-http", ":${var.ops_port}",
            "--replicas", tostring(var.max_replicas)],
            var.extra_args,
          )

          port {
            name           = "http"
            container_port = var.container_port
            protocol       = "TCP"
          }

          # Health, readiness and metrics, apart from MCP: the Service does not expose it.
          port {
            name           = "ops"
            container_port = var.ops_port
            protocol       = "TCP"
          }

          dynamic "env" {
            for_each = local.environment
            content {
              name  = env.key
              value = env.value
            }
          }

          dynamic "env" {
            for_each = local.secret_env_names
            content {
              name = env.value
              value_from {
                secret_key_ref {
                  name = env.value == "TASKGATE_TOKEN_KEYS" ? local.token_keys_secret : "${var.name}-secrets"
                  key  = env.value
                }
              }
            }
          }

          dynamic "env" {
            for_each = var.restate_auth_token_secret_name == null ? [] : [var.restate_auth_token_secret_name]
            content {
              name = "RESTATE_AUTH_TOKEN"
              value_from {
                secret_key_ref {
                  name = env.value
                  key  = "RESTATE_AUTH_TOKEN"
                }
              }
            }
          }

          volume_mount {
            name       = "mapping"
            mount_path = "/etc/taskgate/tools.yaml"
            sub_path   = "tools.yaml"
            read_only  = true
          }

          dynamic "volume_mount" {
            for_each = local.has_tls ? [1] : []
            content {
              name       = "temporal-tls"
              mount_path = local.tls_dir
              read_only  = true
            }
          }

          liveness_probe {
            http_get {
              path = var.liveness_path
              port = "ops"
            }
            period_seconds    = 10
            timeout_seconds   = 3
            failure_threshold = 3
          }

          readiness_probe {
            http_get {
              path = var.readiness_path
              port = "ops"
            }
            period_seconds    = 5
            timeout_seconds   = 3
            failure_threshold = 2
          }

          # taskgate checks every mapped target (up to 30 s) before it listens; an engine that does
          # not answer leaves it serving, but not ready.
          startup_probe {
            http_get {
              path = var.liveness_path
              port = "ops"
            }
            period_seconds    = 2
            failure_threshold = 30
          }

          resources {
            requests = {
              cpu    = var.resources.cpu_request
              memory = var.resources.memory_request
            }
            limits = merge(
              { memory = var.resources.memory_limit },
              var.resources.cpu_limit == null ? {} : { cpu = var.resources.cpu_limit },
            )
          }

          security_context {
            allow_privilege_escalation = false
            read_only_root_filesystem  = true
            capabilities {
              drop = ["ALL"]
            }
          }
        }

        volume {
          name = "mapping"
          config_map {
            name = kubernetes_config_map_v1.mapping.metadata[0].name
          }
        }

        dynamic "volume" {
          for_each = local.has_tls ? [1] : []
          content {
            name = "temporal-tls"
            secret {
              secret_name  = kubernetes_secret_v1.temporal_tls[0].metadata[0].name
              default_mode = "0440"
            }
          }
        }
      }
    }
  }
}

resource "kubernetes_service_v1" "this" {
  metadata {
    name        = var.name
    namespace   = local.namespace
    labels      = local.labels
    annotations = var.service_annotations
  }

  spec {
    type     = var.service_type
    selector = local.selector

    port {
      name        = "http"
      port        = var.service_port
      target_port = "http"
      protocol    = "TCP"
    }
  }
}

resource "kubernetes_horizontal_pod_autoscaler_v2" "this" {
  metadata {
    name      = var.name
    namespace = local.namespace
    labels    = local.labels
  }

  spec {
    min_replicas = var.min_replicas
    max_replicas = var.max_replicas

    scale_target_ref {
      api_version = "apps/v1"
      kind        = "Deployment"
      name        = kubernetes_deployment_v1.this.metadata[0].name
    }

    metric {
      type = "Resource"
      resource {
        name = "cpu"
        target {
          type                = "Utilization"
          average_utilization = var.cpu_target_percent
        }
      }
    }
  }
}

resource "kubernetes_pod_disruption_budget_v1" "this" {
  count = var.pdb_min_available > 0 ? 1 : 0

  metadata {
    name      = var.name
    namespace = local.namespace
    labels    = local.labels
  }

  spec {
    min_available = tostring(var.pdb_min_available)

    selector {
      match_labels = local.selector
    }
  }
}
