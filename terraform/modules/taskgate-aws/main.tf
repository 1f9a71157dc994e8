data "aws_partition" "current" {}
data "aws_region" "current" {}
data "aws_caller_identity" "current" {}

locals {
  partition  = data.aws_partition.current.partition
  region     = data.aws_region.current.region
  account_id = data.aws_caller_identity.current.account_id

  mcp_url = "https://${var.domain_name}/mcp"

  # The mapping: the one given, or the module's own parameter. (mapping_yaml may only be known
  # after apply, when it holds ARNs of resources created with it; mapping_arn is known.)
  mapping_arn = var.mapping_arn != null ? var.mapping_arn : aws_ssm_parameter.mapping[0].arn

  # Everything the task execution role reads for the containers: what each is injected as.
  files = { for i, name in sort(keys(var.secret_files)) : name => { env = "TASKGATE_FILE_${i}", arn = var.secret_files[name] } }
  taskgate_secrets = merge(
    { TASKGATE_TOKEN_KEYS = var.token_keys_secret_arn },
    var.secret_environment,
    var.api_key_secret_arns,
  )
  file_secrets   = { for name, f in local.files : f.env => f.arn }
  loader_secrets = merge({ TASKGATE_MAPPING = local.mapping_arn }, local.file_secrets)
  # The ARNs given as variables (the mapping parameter this module creates is added in iam.tf).
  # Secrets Manager ARNs may carry a JSON key and version after the secret's own ARN (7 fields).
  given_secret_arns   = distinct(concat(values(local.taskgate_secrets), values(local.file_secrets), var.mapping_arn == null ? [] : [var.mapping_arn]))
  secretsmanager_arns = sort(distinct([for arn in local.given_secret_arns : join(":", slice(split(":", arn), 0, 7)) if split(":", arn)[2] == "secretsmanager"]))
  ssm_parameter_arns  = sort(distinct([for arn in local.given_secret_arns : arn if split(":", arn)[2] == "ssm"]))

  # ECR repositories the images come from, for the execution role: ACCOUNT.dkr.ecr.REGION.amazonaws.com[.cn]/REPO[:TAG|@DIGEST].
  ecr_images = flatten([
    for image in [var.image, var.config_loader_image] : [
      for m in regexall("^([0-9]{12})\\.dkr\\.ecr\\.([a-z0-9-]+)\\.amazonaws\\.com(?:\\.cn)?/([^:@]+)", image) :
      { account = m[0], region = m[1], repository = m[2] }
    ]
  ])
  ecr_repositories = sort(distinct([for r in local.ecr_images : "arn:${local.partition}:ecr:${r.region}:${r.account}:repository/${r.repository}"]))

  # The loader writes each file with printf from its environment variable: no value is ever part of
  # the command line. Names are checked by the secret_files validation.
  loader_script = join("; ", concat(
    ["set -eu", "umask 0222", "printf '%s' \"$TASKGATE_MAPPING\" > /etc/taskgate/tools.yaml"],
    [for name, f in local.files : "printf '%s' \"$${${f.env}}\" > '/etc/taskgate/${name}'"],
  ))

  environment = merge(
    var.environment,
    {
      AWS_REGION       = local.region
      TASKGATE_MCP_URL = local.mcp_url
    },
    var.stepfunctions_events == null ? {} : { TASKGATE_SFN_EVENTS_TOPIC_ARN = module.stepfunctions_events[0].topic_arn },
    var.oauth == null ? {} : merge(
      {
        TASKGATE_OAUTH_ISSUER   = var.oauth.issuer
        TASKGATE_OAUTH_AUDIENCE = var.oauth.audience
        TASKGATE_OAUTH_SCOPES   = join(" ", var.oauth.scopes)
      },
      var.oauth.jwks_url == null ? {} : { TASKGATE_OAUTH_JWKS_URL = var.oauth.jwks_url },
    ),
  )

  # The state machines whose status changes the event source's rule sends (stepfunctions_events).
  events_state_machines = var.stepfunctions_events == null ? [] : (
    var.stepfunctions_events.state_machine_arns != null ? var.stepfunctions_events.state_machine_arns : var.state_machine_arns
  )

  cluster_arn  = var.cluster_arn != null ? var.cluster_arn : aws_ecs_cluster.this[0].arn
  cluster_name = element(split("/", local.cluster_arn), length(split("/", local.cluster_arn)) - 1)

  tags = merge({ "taskgate:deployment" = var.name }, var.tags)
}

resource "aws_ssm_parameter" "mapping" {
  count = var.mapping_arn == null ? 1 : 0

  name        = "/${var.name}/mapping"
  description = "taskgate mapping file (tools.yaml) of ${var.name}"
  type        = "String"
  tier        = "Intelligent-Tiering"
  value       = var.mapping_yaml
  tags        = local.tags
}

resource "aws_cloudwatch_log_group" "this" {
  name              = "/ecs/${var.name}"
  retention_in_days = var.log_retention_days
  kms_key_id        = var.log_kms_key_arn
  tags              = local.tags
}
