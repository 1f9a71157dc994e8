# The task role: what taskgate itself may do. Only the Step Functions calls its mapping needs (and
# its event source's queues), computed by the taskgate-iam-policy module (the Terraform form of
# `taskgate iam-policy`).
module "iam_policy" {
  source = "../taskgate-iam-policy"

  state_machine_arns              = var.state_machine_arns
  sync_express_state_machine_arns = var.sync_express_state_machine_arns
  human_input                     = var.human_input
  cross_account                   = var.cross_account
  events = var.stepfunctions_events == null ? [] : [{
    topic_arn    = module.stepfunctions_events[0].topic_arn
    queue_prefix = var.stepfunctions_events.queue_prefix
  }]
}

# Step Functions' own events, when stepfunctions_events is set: the rule and the topic the replicas'
# queues subscribe to (each replica creates, renews and deletes its own).
module "stepfunctions_events" {
  source = "../taskgate-stepfunctions-events"
  count  = var.stepfunctions_events == null ? 0 : 1

  name               = "${var.name}-sfn-events"
  state_machine_arns = local.events_state_machines
  tags               = local.tags
}

# Only ECS tasks of this account and region may assume the roles (no confused deputy).
data "aws_iam_policy_document" "ecs_tasks_trust" {
  statement {
    sid     = "EcsTasks"
    effect  = "Allow"
    actions = ["sts:AssumeRole"]

    principals {
      type        = "Service"
      identifiers = ["ecs-tasks.amazonaws.com"]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [local.account_id]
    }
    condition {
      test     = "ArnLike"
      variable = "aws:SourceArn"
      values   = ["arn:${local.partition}:ecs:${local.region}:${local.account_id}:*"]
    }
  }
}

resource "aws_iam_role" "task" {
  name                 = "${var.name}-task"
  description          = "taskgate ${var.name}: the Step Functions calls its mapping needs"
  assume_role_policy   = data.aws_iam_policy_document.ecs_tasks_trust.json
  permissions_boundary = var.permissions_boundary_arn
  tags                 = local.tags
}

resource "aws_iam_role_policy" "task" {
  # IAM refuses a policy with no statement: a mapping of Temporal workflows only needs none.
  # has_statements is known when planning, even when the ARNs come from resources of this apply.
  count = module.iam_policy.has_statements ? 1 : 0

  name   = "step-functions"
  role   = aws_iam_role.task.id
  policy = module.iam_policy.policy_json
}

# The task execution role: what ECS does to start the task (pull the images, write the logs,
# read the mapping and the secrets into the containers).
resource "aws_iam_role" "execution" {
  name                 = "${var.name}-execution"
  description          = "ECS starting taskgate ${var.name}: images, logs, mapping and secrets"
  assume_role_policy   = data.aws_iam_policy_document.ecs_tasks_trust.json
  permissions_boundary = var.permissions_boundary_arn
  tags                 = local.tags
}

data "aws_iam_policy_document" "execution" {
  statement {
    sid       = "Logs"
    effect    = "Allow"
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["${aws_cloudwatch_log_group.this.arn}:log-stream:*"]
  }

  dynamic "statement" {
    for_each = length(local.ecr_repositories) > 0 ? [1] : []
    content {
      sid       = "EcrLogin"
      effect    = "Allow"
      actions   = ["ecr:GetAuthorizationToken"]
      resources = ["*"] # the action names no resource
    }
  }

  dynamic "statement" {
    for_each = length(local.ecr_repositories) > 0 ? [1] : []
    content {
      sid       = "EcrPull"
      effect    = "Allow"
      actions   = ["ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"]
      resources = local.ecr_repositories
    }
  }

  dynamic "statement" {
    for_each = length(local.ssm_parameter_arns) > 0 || var.mapping_arn == null ? [1] : []
    content {
      sid       = "Parameters"
      effect    = "Allow"
      actions   = ["ssm:GetParameters"]
      resources = sort(concat(local.ssm_parameter_arns, aws_ssm_parameter.mapping[*].arn))
    }
  }

  dynamic "statement" {
    for_each = length(local.secretsmanager_arns) > 0 || var.repository_credentials_secret_arn != null ? [1] : []
    content {
      sid     = "Secrets"
      effect  = "Allow"
      actions = ["secretsmanager:GetSecretValue"]
      resources = sort(distinct(concat(local.secretsmanager_arns,
      var.repository_credentials_secret_arn == null ? [] : [var.repository_credentials_secret_arn])))
    }
  }

  dynamic "statement" {
    for_each = length(var.kms_key_arns) > 0 ? [1] : []
    content {
      sid       = "DecryptSecrets"
      effect    = "Allow"
      actions   = ["kms:Decrypt"]
      resources = var.kms_key_arns

      condition {
        test     = "StringEquals"
        variable = "kms:ViaService"
        values   = ["secretsmanager.${local.region}.amazonaws.com", "ssm.${local.region}.amazonaws.com"]
      }
    }
  }
}

resource "aws_iam_role_policy" "execution" {
  name   = "start-task"
  role   = aws_iam_role.execution.id
  policy = data.aws_iam_policy_document.execution.json
}
