// One git operation with JGit (Debian's libjgit-java 4.11, SSH through libjsch-java), for
// interop-jgit.test.ts (issue 24: git clients other than C git). Compiled by the test with javac
// into a temp dir against the jars in /usr/share/java; run once per operation:
//
//   java InteropJGit clone URL DIR              → {"refs": {name: oid}}   (every ref of the clone)
//   java InteropJGit fetch DIR URL REFSPEC...   → {"updates": {local: {remote, old, new, result}}}
//   java InteropJGit push DIR URL REFSPEC...    → {"updates": {remote: {status, message}}}
//
// Prints one JSON line on stdout; an exception exits 1 with its stack on stderr.
// Environment:
//   JGIT_TOKEN        HTTP: Basic credentials x-token:TOKEN (asked for when the server says 401)
//   JGIT_SSH_KEY      SSH: the private key (PEM: JSch 0.1.5x reads no OpenSSH-format keys)
//   JGIT_KNOWN_HOSTS  SSH: known_hosts to check the server's host key against (strictly)
//   JGIT_SSH_LOG      SSH: "1" for JSch's log on stderr
//
// JSch 0.1.5x verifies host keys of types ssh-rsa (RSA signatures with SHA-1), ssh-dss and
// ecdsa-sha2-nistp*, and reads PEM private keys only; it connects to svc through the ssh-rsa
// signature of svc's RSA host key (interop-jgit.test.ts says more).
import com.jcraft.jsch.JSch;
import com.jcraft.jsch.JSchException;
import com.jcraft.jsch.Session;
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.eclipse.jgit.api.Git;
import org.eclipse.jgit.api.TransportConfigCallback;
import org.eclipse.jgit.lib.Ref;
import org.eclipse.jgit.lib.RefDatabase;
import org.eclipse.jgit.transport.FetchResult;
import org.eclipse.jgit.transport.JschConfigSessionFactory;
import org.eclipse.jgit.transport.OpenSshConfig;
import org.eclipse.jgit.transport.PushResult;
import org.eclipse.jgit.transport.RefSpec;
import org.eclipse.jgit.transport.RemoteRefUpdate;
import org.eclipse.jgit.transport.SshTransport;
import org.eclipse.jgit.transport.TrackingRefUpdate;
import org.eclipse.jgit.transport.Transport;
import org.eclipse.jgit.transport.UsernamePasswordCredentialsProvider;
import org.eclipse.jgit.util.FS;

public class InteropJGit {
  public static void main(String[] args) throws Exception {
    String op = args[0];
    TransportConfigCallback transport = transportConfig();
    StringBuilder out = new StringBuilder();
    switch (op) {
      case "clone": {
        try (Git git = Git.cloneRepository().setURI(args[1]).setDirectory(new File(args[2])).setCloneAllBranches(true).setTransportConfigCallback(transport).call()) {
          Map<String, String> refs = new TreeMap<>();
          for (Ref ref : git.getRepository().getRefDatabase().getRefs(RefDatabase.ALL).values()) {
            if (ref.isSymbolic()) refs.put(ref.getName(), "ref: " + ref.getTarget().getName());
            else refs.put(ref.getName(), ref.getObjectId().name());
          }
          out.append("{\"refs\":").append(json(refs)).append('}');
        }
        break;
      }
      case "fetch": {
        try (Git git = Git.open(new File(args[1]))) {
          FetchResult r = git.fetch().setRemote(args[2]).setRefSpecs(specs(args, 3)).setTransportConfigCallback(transport).call();
          Map<String, String> updates = new TreeMap<>();
          for (TrackingRefUpdate u : r.getTrackingRefUpdates()) {
            Map<String, String> one = new TreeMap<>();
            one.put("remote", u.getRemoteName());
            one.put("old", u.getOldObjectId().name());
            one.put("new", u.getNewObjectId().name());
            one.put("result", u.getResult().name());
            updates.put(u.getLocalName(), json(one));
          }
          out.append("{\"updates\":").append(jsonRaw(updates)).append('}');
        }
        break;
      }
      case "push": {
        try (Git git = Git.open(new File(args[1]))) {
          Map<String, String> updates = new TreeMap<>();
          for (PushResult r : git.push().setRemote(args[2]).setRefSpecs(specs(args, 3)).setTransportConfigCallback(transport).call()) {
            for (RemoteRefUpdate u : r.getRemoteUpdates()) {
              Map<String, String> one = new TreeMap<>();
              one.put("status", u.getStatus().name());
              one.put("message", u.getMessage());
              updates.put(u.getRemoteName(), json(one));
            }
          }
          out.append("{\"updates\":").append(jsonRaw(updates)).append('}');
        }
        break;
      }
      default:
        throw new IllegalArgumentException("unknown operation " + op);
    }
    System.out.println(out);
    System.out.flush();
    // Why exit: a transport thread left behind (JSch's session reader) must not keep the JVM up.
    System.exit(0);
  }

  private static List<RefSpec> specs(String[] args, int from) {
    List<RefSpec> list = new ArrayList<>();
    for (int i = from; i < args.length; i++) list.add(new RefSpec(args[i]));
    return list;
  }

  /** HTTP credentials and the SSH session factory, from the environment. */
  private static TransportConfigCallback transportConfig() {
    String token = System.getenv("JGIT_TOKEN");
    String key = System.getenv("JGIT_SSH_KEY");
    String knownHosts = System.getenv("JGIT_KNOWN_HOSTS");
    if ("1".equals(System.getenv("JGIT_SSH_LOG"))) {
      JSch.setLogger(new com.jcraft.jsch.Logger() {
        public boolean isEnabled(int level) {
          return true;
        }

        public void log(int level, String message) {
          System.err.println("jsch: " + message);
        }
      });
    }
    JschConfigSessionFactory ssh = new JschConfigSessionFactory() {
      @Override
      protected void configure(OpenSshConfig.Host host, Session session) {
        session.setConfig("StrictHostKeyChecking", "yes");
        session.setConfig("PreferredAuthentications", "publickey");
      }

      @Override
      protected JSch createDefaultJSch(FS fs) throws JSchException {
        JSch jsch = new JSch();
        if (key != null) jsch.addIdentity(key);
        if (knownHosts != null) jsch.setKnownHosts(knownHosts);
        return jsch;
      }
    };
    return (Transport t) -> {
      if (token != null && !(t instanceof SshTransport)) t.setCredentialsProvider(new UsernamePasswordCredentialsProvider("x-token", token));
      if (t instanceof SshTransport) ((SshTransport) t).setSshSessionFactory(ssh);
    };
  }

  private static String json(Map<String, String> map) {
    Map<String, String> quoted = new TreeMap<>();
    for (Map.Entry<String, String> e : map.entrySet()) quoted.put(e.getKey(), e.getValue() == null ? "null" : quote(e.getValue()));
    return jsonRaw(quoted);
  }

  private static String jsonRaw(Map<String, String> map) {
    StringBuilder b = new StringBuilder("{");
    for (Map.Entry<String, String> e : map.entrySet()) {
      if (b.length() > 1) b.append(',');
      b.append(quote(e.getKey())).append(':').append(e.getValue());
    }
    return b.append('}').toString();
  }

  private static String quote(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    return b.append('"').toString();
  }
}
