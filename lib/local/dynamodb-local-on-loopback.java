import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

/**
 * DynamoDB Local on 127.0.0.1 only. Its command line has no option for the interface (its -help
 * lists none), and its server is Jetty's `new Server(port)`, which listens on every interface.
 * This builds the server from the same arguments as DynamoDB Local's own main, sets the host of
 * its one connector before it starts, and starts it (lib/local/dynamodb-local.ts).
 */
class DynamoDbLocalOnLoopback {
  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Field server = DynamoDBProxyServer.class.getDeclaredField("server");
    server.setAccessible(true);
    for (Connector connector : ((Server) server.get(proxy)).getConnectors()) {
      ((ServerConnector) connector).setHost("127.0.0.1");
    }
    try {
      proxy.start();
    } catch (Exception failure) {
      // Jetty's threads would keep the JVM alive; the caller reads the exit and this output.
      failure.printStackTrace();
      System.exit(1);
    }
  }
}
