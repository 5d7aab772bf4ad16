import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { tableDefinition } from '../../lib/store/table-definition.js';

const stringKey = (name: string): dynamodb.Attribute => ({ name, type: dynamodb.AttributeType.STRING });

/**
 * The single table, shaped by lib/store/table-definition.ts like DynamoDB Local's copy; or, given
 * `existingTableName`, a table made outside the stack (a point-in-time restore, docs/operations.md)
 * with the same shape, which the functions use instead.
 */
export class ServiceTable extends Construct {
  readonly table: dynamodb.ITable;
  readonly indexNames: readonly string[];

  constructor(scope: Construct, id: string, existingTableName?: string) {
    super(scope, id);
    this.indexNames = tableDefinition.globalIndexes.map((index) => index.name);
    if (existingTableName) {
      this.table = dynamodb.Table.fromTableAttributes(this, 'Table', {
        tableName: existingTableName,
        globalIndexes: [...this.indexNames],
        grantIndexPermissions: true,
      });
      return;
    }
    const table = new dynamodb.Table(this, 'Table', {
      partitionKey: stringKey(tableDefinition.partitionKey),
      sortKey: stringKey(tableDefinition.sortKey),
      timeToLiveAttribute: tableDefinition.ttlAttribute,
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const index of tableDefinition.globalIndexes) {
      table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: stringKey(index.partitionKey),
        sortKey: stringKey(index.sortKey),
        projectionType: dynamodb.ProjectionType.ALL,
      });
    }
    this.table = table;
  }
}
