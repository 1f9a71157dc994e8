resource "aws_ecs_cluster" "this" {
  count = var.cluster_arn == null ? 1 : 0

  name = var.name
  tags = local.tags

  setting {
    name  = "containerInsights"
    value = var.container_insights ? "enabled" : "disabled"
  }
}

resource "aws_security_group" "service" {
  name        = "${var.name}-service"
  description = "taskgate ${var.name} tasks: HTTP from the load balancer, HTTPS to AWS and Temporal"
  vpc_id      = var.vpc_id
  tags        = local.tags
}

resource "aws_vpc_security_group_ingress_rule" "from_load_balancer" {
  for_each = { mcp = var.container_port, health = var.ops_port }

  security_group_id            = aws_security_group.service.id
  description                  = each.key == "mcp" ? "MCP over HTTP from the load balancer" : "Health checks from the load balancer"
  ip_protocol                  = "tcp"
  from_port                    = each.value
  to_port                      = each.value
  referenced_security_group_id = aws_security_group.load_balancer.id
  tags                         = local.tags
}

resource "aws_vpc_security_group_ingress_rule" "metrics" {
  for_each = toset(var.metrics_security_group_ids)

  security_group_id            = aws_security_group.service.id
  description                  = "Prometheus metrics (/metrics on the ops port)"
  ip_protocol                  = "tcp"
  from_port                    = var.ops_port
  to_port                      = var.ops_port
  referenced_security_group_id = each.value
  tags                         = local.tags
}

locals {
  egress = merge(
    { for cidr in var.egress_cidr_blocks : "443 ${cidr}" => { port = 443, cidr = cidr, description = "HTTPS: AWS APIs, Temporal Cloud" } },
    merge([for e in var.extra_egress : { for cidr in e.cidr_blocks : "${e.port} ${cidr}" => { port = e.port, cidr = cidr, description = e.description } }]...),
  )
}

resource "aws_vpc_security_group_egress_rule" "service" {
  for_each = local.egress

  security_group_id = aws_security_group.service.id
  description       = each.value.description
  ip_protocol       = "tcp"
  from_port         = each.value.port
  to_port           = each.value.port
  cidr_ipv4         = strcontains(each.value.cidr, ":") ? null : each.value.cidr
  cidr_ipv6         = strcontains(each.value.cidr, ":") ? each.value.cidr : null
  tags              = local.tags
}

locals {
  log_options = {
    "awslogs-group"  = aws_cloudwatch_log_group.this.name
    "awslogs-region" = local.region
  }

  containers = [
    {
      # Writes the mapping and secret_files into the shared volume, then exits: taskgate's image
      # has no shell. It runs as root (the volume belongs to root) without any capability.
      name                   = "config"
      image                  = var.config_loader_image
      essential              = false
      user                   = "0"
      entryPoint             = ["sh", "-c"]
      command                = [local.loader_script]
      readonlyRootFilesystem = true
      linuxParameters        = { capabilities = { drop = ["ALL"] } }
      secrets                = [for name in sort(keys(local.loader_secrets)) : { name = name, valueFrom = local.loader_secrets[name] }]
      # A new mapping_yaml makes a new task definition revision, and so a new deployment.
      environment = var.mapping_arn != null ? [] : [{ name = "TASKGATE_MAPPING_SHA256", value = sha256(var.mapping_yaml) }]
      mountPoints = [{ sourceVolume = "config", containerPath = "/etc/taskgate", readOnly = false }]
      logConfiguration = {
        logDriver = "awslogs"
        options   = merge(local.log_options, { "awslogs-stream-prefix" = "config" })
      }
    },
    merge(
      {
        name      = "taskgate"
        image     = var.image
        essential = true
        user      = "65532:65532"
        # --replicas: every task reads the engines at its share of the mapping's read budgets,
        # counting on as many tasks as autoscaling may run.
        command = concat(
          ["serve", "--config", "/etc/taskgate/tools.yaml", "--http", ":${var.container_port}", "--ops-http", ":${var.ops_port}",
          "--replicas", tostring(var.max_capacity)],
          var.extra_args,
        )
        portMappings = [
          { name = "http", containerPort = var.container_port, protocol = "tcp" },
          { name = "ops", containerPort = var.ops_port, protocol = "tcp" },
        ]
        environment            = [for name in sort(keys(local.environment)) : { name = name, value = local.environment[name] }]
        secrets                = [for name in sort(keys(local.taskgate_secrets)) : { name = name, valueFrom = local.taskgate_secrets[name] }]
        readonlyRootFilesystem = true
        linuxParameters        = { capabilities = { drop = ["ALL"] }, initProcessEnabled = true }
        mountPoints            = [{ sourceVolume = "config", containerPath = "/etc/taskgate", readOnly = true }]
        dependsOn              = [{ containerName = "config", condition = "SUCCESS" }]
        stopTimeout            = 10
        logConfiguration = {
          logDriver = "awslogs"
          options   = merge(local.log_options, { "awslogs-stream-prefix" = "taskgate" })
        }
      },
      var.repository_credentials_secret_arn == null ? {} : {
        repositoryCredentials = { credentialsParameter = var.repository_credentials_secret_arn }
      },
    ),
  ]
}

resource "aws_ecs_task_definition" "this" {
  family                   = var.name
  requires_compatibilities = ["FARGATE"]
  network_mode             = "awsvpc"
  cpu                      = var.cpu
  memory                   = var.memory
  execution_role_arn       = aws_iam_role.execution.arn
  task_role_arn            = aws_iam_role.task.arn
  container_definitions    = jsonencode(local.containers)
  tags                     = local.tags

  runtime_platform {
    operating_system_family = "LINUX"
    cpu_architecture        = var.cpu_architecture
  }

  # Task storage shared by the two containers: the loader writes, taskgate reads.
  volume {
    name = "config"
  }

  lifecycle {
    precondition {
      condition     = (var.mapping_yaml == null) != (var.mapping_arn == null)
      error_message = "Set exactly one of mapping_yaml (the mapping's content) and mapping_arn (an existing parameter or secret that holds it)."
    }
    precondition {
      condition     = var.min_capacity >= 1 && var.min_capacity <= var.max_capacity
      error_message = "min_capacity must be at least 1 and at most max_capacity."
    }
  }
}

resource "aws_ecs_service" "this" {
  name                              = var.name
  cluster                           = local.cluster_arn
  task_definition                   = aws_ecs_task_definition.this.arn
  launch_type                       = "FARGATE"
  desired_count                     = var.min_capacity
  health_check_grace_period_seconds = var.health_check_grace_period_seconds
  enable_execute_command            = false
  enable_ecs_managed_tags           = true
  propagate_tags                    = "SERVICE"
  tags                              = local.tags

  network_configuration {
    subnets          = var.service_subnet_ids
    security_groups  = [aws_security_group.service.id]
    assign_public_ip = var.assign_public_ip
  }

  load_balancer {
    target_group_arn = aws_lb_target_group.this.arn
    container_name   = "taskgate"
    container_port   = var.container_port
  }

  deployment_minimum_healthy_percent = 100
  deployment_maximum_percent         = 200

  deployment_circuit_breaker {
    enable   = true
    rollback = true
  }

  lifecycle {
    # Autoscaling owns the count once the service exists.
    ignore_changes = [desired_count]
  }

  depends_on = [aws_lb_listener.https, aws_iam_role_policy.execution]
}
