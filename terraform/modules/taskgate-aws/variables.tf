# ---------------------------------------------------------------------------------------------------
# What to run
# ---------------------------------------------------------------------------------------------------

variable "name" {
  description = "Name of everything this module creates (load balancer, target group, service, roles, log group, parameter): lower-case letters, digits and hyphens, at most 28 characters."
  type        = string
  default     = "taskgate"

  validation {
    condition     = can(regex("^[a-z0-9]([a-z0-9-]{0,26}[a-z0-9])?$", var.name))
    error_message = "name must be 1 to 28 lower-case letters, digits and hyphens, starting and ending with a letter or digit."
  }
}

variable "image" {
  description = "The taskgate container image, built from the repository's Dockerfile, by tag or digest (for example 123456789012.dkr.ecr.eu-west-1.amazonaws.com/taskgate:v1.2.0 or ...@sha256:...). Pulls from ECR in this account get the permissions they need; other private registries need repository_credentials_secret_arn."
  type        = string
}

variable "repository_credentials_secret_arn" {
  description = "Secrets Manager secret with the username and password of a private registry other than ECR that holds image; null for ECR and public images."
  type        = string
  default     = null
}

variable "config_loader_image" {
  description = "Image of the short-lived container that writes the mapping and secret_files from Parameter Store and Secrets Manager into the task's shared volume before taskgate starts (it needs sh and printf; taskgate's own image has no shell). Pin it by exact tag or digest."
  type        = string
  default     = "public.ecr.aws/docker/library/busybox:1.37.0"
}

variable "cpu_architecture" {
  description = "CPU architecture of the Fargate tasks, X86_64 or ARM64; the image must be built for it (docker buildx --platform)."
  type        = string
  default     = "X86_64"

  validation {
    condition     = contains(["X86_64", "ARM64"], var.cpu_architecture)
    error_message = "cpu_architecture must be X86_64 or ARM64."
  }
}

variable "cpu" {
  description = "Fargate CPU units per task (256 = 0.25 vCPU). taskgate keeps no state per task; most of its work is waiting on the engines."
  type        = number
  default     = 256
}

variable "memory" {
  description = "Fargate memory per task in MiB; it must be a valid combination with cpu."
  type        = number
  default     = 512
}

variable "container_port" {
  description = "Port taskgate listens on inside the task (serve --http :PORT)."
  type        = number
  default     = 8080
}

variable "ops_port" {
  description = "Port of taskgate's operations listener inside the task (serve --ops-http :PORT): /healthz, /readyz and /metrics, apart from MCP. The load balancer checks it and forwards nothing to it."
  type        = number
  default     = 9090
}

variable "metrics_security_group_ids" {
  description = "Security groups allowed to reach ops_port of the tasks, for a Prometheus or an ADOT collector that scrapes /metrics there."
  type        = list(string)
  default     = []
}

variable "extra_args" {
  description = "Arguments added to `taskgate serve --config /etc/taskgate/tools.yaml --http :PORT`, for example [\"--no-task-clients\", \"wait\"], or the flags later releases add (log format, --insecure-no-auth)."
  type        = list(string)
  default     = []
}

# ---------------------------------------------------------------------------------------------------
# Mapping, token keys and other secrets
# ---------------------------------------------------------------------------------------------------

variable "mapping_yaml" {
  description = "The mapping file's content (for example file(\"tools.yaml\")): the module stores it in an SSM parameter (Intelligent-Tiering, so up to 8 KB). Set this or mapping_arn. `$${VAR}` in the mapping reads the task's environment (AWS_REGION, environment, secret_environment)."
  type        = string
  default     = null
}

variable "mapping_arn" {
  description = "Instead of mapping_yaml: ARN of an existing SSM parameter (String or SecureString, up to 8 KB) or Secrets Manager secret (up to 64 KB) that holds the mapping file."
  type        = string
  default     = null

  validation {
    condition     = var.mapping_arn == null || can(regex("^arn:[a-z0-9-]+:(secretsmanager|ssm):", var.mapping_arn))
    error_message = "mapping_arn must be a Secrets Manager secret ARN or an SSM parameter ARN."
  }
}

variable "token_keys_secret_arn" {
  description = "ARN of the Secrets Manager secret (or SSM SecureString parameter) holding TASKGATE_TOKEN_KEYS, the keys that seal task ids: `ID:BASE64[,ID:BASE64...]` as printed by `taskgate token new-key`, the same on every replica."
  type        = string

  validation {
    condition     = can(regex("^arn:[a-z0-9-]+:(secretsmanager|ssm):", var.token_keys_secret_arn))
    error_message = "token_keys_secret_arn must be a Secrets Manager secret ARN or an SSM parameter ARN."
  }
}

variable "secret_environment" {
  description = "More environment variables read from Secrets Manager or SSM Parameter Store: name => secret or parameter ARN. For example the Temporal Cloud API key that the mapping's apiKeyEnv names."
  type        = map(string)
  default     = {}

  validation {
    condition     = alltrue([for arn in values(var.secret_environment) : can(regex("^arn:[a-z0-9-]+:(secretsmanager|ssm):", arn))])
    error_message = "secret_environment values must be Secrets Manager secret ARNs or SSM parameter ARNs."
  }
}

variable "api_key_secret_arns" {
  description = "API keys of HTTP callers, for the mapping's auth.apiKeys: environment variable name (the entry's keyEnv) => Secrets Manager secret or SSM SecureString ARN holding the key."
  type        = map(string)
  default     = {}

  validation {
    condition     = alltrue([for arn in values(var.api_key_secret_arns) : can(regex("^arn:[a-z0-9-]+:(secretsmanager|ssm):", arn))])
    error_message = "api_key_secret_arns values must be Secrets Manager secret ARNs or SSM parameter ARNs."
  }
}

variable "oauth" {
  description = "OAuth settings for the mapping's auth.oauth, passed as TASKGATE_OAUTH_ISSUER, TASKGATE_OAUTH_AUDIENCE, TASKGATE_OAUTH_JWKS_URL and TASKGATE_OAUTH_SCOPES (space-separated) for the mapping to refer to; null for none. The resource URL for protected-resource metadata is TASKGATE_MCP_URL, always set."
  type = object({
    issuer   = string
    audience = string
    jwks_url = optional(string)
    scopes   = optional(list(string), [])
  })
  default = null
}

variable "secret_files" {
  description = "Files written to /etc/taskgate/NAME before taskgate starts, from Secrets Manager or SSM: NAME => secret or parameter ARN. For Temporal mTLS, for example { \"temporal-ca.pem\" = ..., \"temporal.crt\" = ..., \"temporal.key\" = ... } and tls.caFile: /etc/taskgate/temporal-ca.pem in the mapping."
  type        = map(string)
  default     = {}

  validation {
    condition     = alltrue([for name, arn in var.secret_files : can(regex("^[A-Za-z0-9][A-Za-z0-9._-]*$", name)) && name != "tools.yaml" && can(regex("^arn:[a-z0-9-]+:(secretsmanager|ssm):", arn))])
    error_message = "secret_files keys must be plain file names (letters, digits, '.', '_', '-'; not tools.yaml) and values Secrets Manager or SSM ARNs."
  }
}

variable "environment" {
  description = "More plain environment variables for taskgate, for `$${VAR}` in the mapping (for example TEMPORAL_ADDRESS) and the AWS SDK."
  type        = map(string)
  default     = {}
}

variable "kms_key_arns" {
  description = "Customer-managed KMS keys that encrypt the secrets and parameters above: the task execution role may decrypt with them. Empty when they use AWS-managed keys."
  type        = list(string)
  default     = []
}

# ---------------------------------------------------------------------------------------------------
# Step Functions: what the task role may do (the same inputs as modules/taskgate-iam-policy)
# ---------------------------------------------------------------------------------------------------

variable "state_machine_arns" {
  description = "Targets of the mapping's tools on Standard state machines in reach of the task role's own credentials: state machine, version or alias ARNs. The task role may start them and read, poll and stop their executions, nothing else."
  type        = list(string)
  default     = []
}

variable "sync_express_state_machine_arns" {
  description = "Targets of the mapping's tools on Express state machines (run with StartSyncExecution)."
  type        = list(string)
  default     = []
}

variable "human_input" {
  description = "Whether some tool answers .waitForTaskToken states (allows SendTaskSuccess and SendTaskFailure, which AWS only grants on \"*\")."
  type        = bool
  default     = false
}

variable "cross_account" {
  description = "State machines reached by assuming a role (the engine block's roleArn), one entry per role: the task role may assume each role, and the output cross_account_role_policies holds what each role needs in its own account."
  type = list(object({
    role_arn                        = string
    state_machine_arns              = optional(list(string), [])
    sync_express_state_machine_arns = optional(list(string), [])
    human_input                     = optional(bool, false)
  }))
  default = []
}

variable "stepfunctions_events" {
  description = "Step Functions' own status change events as the event source of the mapping's Step Functions engine block; null for none. The module provisions an EventBridge rule and an SNS topic (taskgate-stepfunctions-events, named NAME-sfn-events) that only the rule may publish to, gives the task role what each replica's queue needs (queues of queue_prefix, which must be the mapping's events.queuePrefix, and the subscription to the topic), and passes the topic's ARN as TASKGATE_SFN_EVENTS_TOPIC_ARN, for events: {topicArn: \"$${TASKGATE_SFN_EVENTS_TOPIC_ARN}\"} in the mapping. state_machine_arns restricts the rule: null for those of the variable state_machine_arns, [] for every state machine of the account and region."
  type = object({
    state_machine_arns = optional(list(string))
    queue_prefix       = optional(string, "taskgate-")
  })
  default = null
}

variable "permissions_boundary_arn" {
  description = "Permissions boundary for the task role and the task execution role, where the account requires one; null for none."
  type        = string
  default     = null
}

# ---------------------------------------------------------------------------------------------------
# Network and load balancer
# ---------------------------------------------------------------------------------------------------

variable "vpc_id" {
  description = "VPC of the load balancer and the tasks."
  type        = string
}

variable "load_balancer_subnet_ids" {
  description = "Subnets of the load balancer, in at least two Availability Zones: public subnets for an internet-facing load balancer, private ones with internal = true."
  type        = list(string)
}

variable "service_subnet_ids" {
  description = "Subnets of the tasks, normally private ones with a NAT gateway or VPC endpoints for Step Functions, STS, SSM, Secrets Manager, ECR and CloudWatch Logs (and SQS and SNS with stepfunctions_events)."
  type        = list(string)
}

variable "assign_public_ip" {
  description = "Whether tasks get a public IP (only for tasks in public subnets without NAT)."
  type        = bool
  default     = false
}

variable "internal" {
  description = "Whether the load balancer is internal (reachable only inside the VPC and connected networks). Callers authenticate with the mapping's auth: block either way; an internal load balancer or a narrow allowed_cidr_blocks also keeps others from knocking."
  type        = bool
  default     = false
}

variable "allowed_cidr_blocks" {
  description = "IPv4 and IPv6 CIDR blocks that may reach the load balancer on 443 (and on 80 with redirect_http): the MCP clients' networks."
  type        = list(string)

  validation {
    condition     = length(var.allowed_cidr_blocks) > 0 && alltrue([for c in var.allowed_cidr_blocks : can(cidrhost(c, 0))])
    error_message = "allowed_cidr_blocks must list at least one CIDR block."
  }
}

variable "egress_cidr_blocks" {
  description = "Where tasks may open HTTPS (443) connections: the AWS APIs (Step Functions, STS, SSM, Secrets Manager, ECR, CloudWatch Logs) through NAT or VPC endpoints, and Temporal Cloud."
  type        = list(string)
  default     = ["0.0.0.0/0"]
}

variable "extra_egress" {
  description = "More egress from the tasks, for example a Temporal frontend on 7233: a list of { description, port, cidr_blocks }."
  type = list(object({
    description = string
    port        = number
    cidr_blocks = list(string)
  }))
  default = []
}

variable "certificate_arn" {
  description = "ACM certificate for the HTTPS listener; it must cover domain_name."
  type        = string
}

variable "domain_name" {
  description = "DNS name MCP clients use (covered by certificate_arn), for example taskgate.example.com: the MCP URL is https://DOMAIN_NAME/mcp."
  type        = string
}

variable "route53_zone_id" {
  description = "Route 53 hosted zone in which to create domain_name as an alias of the load balancer; null to create the DNS record elsewhere (a CNAME to the output load_balancer_dns_name)."
  type        = string
  default     = null
}

variable "ssl_policy" {
  description = "TLS policy of the HTTPS listener."
  type        = string
  default     = "ELBSecurityPolicy-TLS13-1-2-2021-06"
}

variable "redirect_http" {
  description = "Whether to listen on port 80 and redirect to HTTPS. MCP clients should be given the https URL: a redirected POST may arrive as a GET."
  type        = bool
  default     = false
}

variable "idle_timeout_seconds" {
  description = "Seconds the load balancer keeps a connection with no data open. Calls that wait (tasks/result on protocol 2025-11-25, --no-task-clients wait, taskSupport: forbidden tools) hold a request open up to the tool's timeout: keep this above the longest."
  type        = number
  default     = 900
}

variable "deletion_protection" {
  description = "Whether the load balancer has deletion protection."
  type        = bool
  default     = false
}

variable "access_logs_bucket" {
  description = "S3 bucket for the load balancer's access logs (its policy must let Elastic Load Balancing write); null for none."
  type        = string
  default     = null
}

variable "health_check_path" {
  description = "Path the load balancer checks on each task's ops_port. /readyz answers 503 while an engine does not answer or a mapped target is missing, so such a task gets no requests (ECS replaces it if that lasts through unhealthy checks); /healthz answers while the process serves."
  type        = string
  default     = "/readyz"
}

variable "health_check_interval_seconds" {
  description = "Seconds between the load balancer's health checks of a task."
  type        = number
  default     = 15
}

variable "health_check_grace_period_seconds" {
  description = "Seconds ECS ignores failing health checks of a new task: taskgate checks every mapped target (up to 30 s) before it listens."
  type        = number
  default     = 60
}

variable "deregistration_delay_seconds" {
  description = "Seconds a stopping task keeps serving requests already in flight. taskgate keeps no state, so only waiting calls are cut short, and clients retry them."
  type        = number
  default     = 30
}

# ---------------------------------------------------------------------------------------------------
# Service and scaling
# ---------------------------------------------------------------------------------------------------

variable "cluster_arn" {
  description = "ARN of an existing ECS cluster to run in; null to create a cluster named after name."
  type        = string
  default     = null
}

variable "container_insights" {
  description = "Whether a cluster created by this module has CloudWatch Container Insights."
  type        = bool
  default     = true
}

variable "min_capacity" {
  description = "Fewest tasks (and the count at creation). Two or more keep the service up through a task's replacement."
  type        = number
  default     = 2
}

variable "max_capacity" {
  description = "Most tasks autoscaling may run; each task reads the engines at this share of the mapping's read budgets (serve --replicas)."
  type        = number
  default     = 6
}

variable "cpu_target_percent" {
  description = "Average CPU utilization of the service that autoscaling keeps."
  type        = number
  default     = 60
}

variable "requests_per_target" {
  description = "Requests per task per minute (ALBRequestCountPerTarget) that autoscaling keeps. Polls are most of taskgate's traffic."
  type        = number
  default     = 3000
}

variable "scale_in_cooldown_seconds" {
  description = "Seconds after a scale-in before the next scale-in."
  type        = number
  default     = 300
}

variable "scale_out_cooldown_seconds" {
  description = "Seconds after a scale-out before the next scale-out."
  type        = number
  default     = 60
}

variable "log_retention_days" {
  description = "Days CloudWatch Logs keeps taskgate's logs."
  type        = number
  default     = 30
}

variable "log_kms_key_arn" {
  description = "KMS key that encrypts the log group (its key policy must allow CloudWatch Logs); null for the service's own encryption."
  type        = string
  default     = null
}

variable "tags" {
  description = "Tags for every resource this module creates."
  type        = map(string)
  default     = {}
}
