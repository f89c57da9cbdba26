package engine

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	uiapi "github.com/temporalio/ui-server/v2/server/api"
	uiauth "github.com/temporalio/ui-server/v2/server/auth"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uicors "github.com/temporalio/ui-server/v2/server/cors"
	uicsrf "github.com/temporalio/ui-server/v2/server/csrf"
	uiheaders "github.com/temporalio/ui-server/v2/server/headers"
	uiroute "github.com/temporalio/ui-server/v2/server/route"
	uiassets "github.com/temporalio/ui-server/v2/ui"
	"google.golang.org/grpc/metadata"

	"github.com/horizon/horizon/internal/secret"
)

// UITokenFile is the file beside the engine's token that holds the Web
// UI's token: a browser that presents it once (the link `horizon ui`
// prints) gets it back as an HttpOnly cookie.
const UITokenFile = secret.UIFile

// UICookie is the cookie that carries the UI token in a browser.
const UICookie = "horizon_ui"

// uiServer is the Temporal Web UI behind horizon's guard. The stock
// ui-server acts as the owner for anyone who reaches its port (it
// forwards the engine's token), answers any Host, and lets a page
// terminate, reset, signal or start workflows. So horizon assembles the
// same routes on its own listener, in front of them:
//   - a loopback Host check, so a page on another site that rebinds its
//     name to 127.0.0.1 cannot read or steer runs (421, as horizon web);
//   - a token, as a cookie set from the link `horizon ui` prints (401
//     without it), so another local user or an agent in a lane cannot;
//   - read-only mode (DisableWriteActions): changes go through horizon's
//     own verbs, which check what they are asked (approve's subject,
//     unblock's note), never through raw engine writes.
type uiServer struct {
	echo *echo.Echo
	ln   net.Listener
	cfg  *uiconfig.ConfigProviderWithRefresh
}

// uiOptions is what the guarded UI needs.
type uiOptions struct {
	listenIP    string
	port        int
	frontend    string // the engine frontend the UI reads
	namespace   string
	engineToken string // presented to the engine on every call
	uiToken     string // asked of the browser
	tls         uiconfig.TLS
}

func newUIServer(o uiOptions) (*uiServer, error) {
	conf := &uiconfig.Config{
		Host:                o.listenIP,
		Port:                o.port,
		TemporalGRPCAddress: o.frontend,
		EnableUI:            true,
		DefaultNamespace:    o.namespace,
		CORS:                uiconfig.CORS{CookieInsecure: true},
		HideLogs:            true,
		DisableNewsFetch:    true,
		DisableWriteActions: true,
		TLS:                 o.tls,
	}
	provider, err := uiconfig.NewConfigProviderWithRefresh(conf)
	if err != nil {
		return nil, fmt.Errorf("engine: Web UI config: %w", err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(o.listenIP, fmt.Sprint(o.port)))
	if err != nil {
		provider.Close()
		return nil, &PortInUseError{What: "Web UI", Addr: net.JoinHostPort(o.listenIP, fmt.Sprint(o.port)), Err: err, Setting: "HORIZON_UI_PORT"}
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Listener = ln
	// The guard comes before routing, so it covers every path, unknown
	// ones included.
	e.Pre(uiGuard(o.listenIP, o.uiToken))
	e.Use(middleware.Recover())
	e.Use(middleware.Gzip())
	e.Use(uicors.CORSMiddleware(uicors.CORSConfig{
		AllowHeaders:     []string{echo.HeaderOrigin, echo.HeaderContentType, echo.HeaderAccept, echo.HeaderXCSRFToken},
		AllowCredentials: true,
		ConfigProvider:   provider,
	}))
	e.Use(middleware.Secure())
	e.Use(uicsrf.EnsureTokenCookie(false))
	e.Use(middleware.CSRFWithConfig(uicsrf.MiddlewareConfig(provider, false)))
	uiroute.SetHealthRoute(e)
	md := metadata.Pairs("authorization", "Bearer "+o.engineToken)
	if err := uiroute.SetAPIRoutes(e, provider, []uiapi.Middleware{
		func(echo.Context) runtime.ServeMuxOption {
			return runtime.WithMetadata(func(context.Context, *http.Request) metadata.MD { return md })
		},
		uiheaders.WithForwardHeaders([]string{uiauth.AuthorizationExtrasHeader, "Caller-Type"}),
	}); err != nil {
		ln.Close()
		provider.Close()
		return nil, fmt.Errorf("engine: Web UI routes: %w", err)
	}
	assets, err := uiassets.Assets()
	if err == nil {
		assets, err = fs.Sub(assets, "local")
	}
	if err == nil {
		err = uiroute.SetUIRoutes(e, "", assets, provider)
	}
	if err != nil {
		ln.Close()
		provider.Close()
		return nil, fmt.Errorf("engine: Web UI pages: %w", err)
	}
	uiroute.SetRenderRoute(e, "")
	return &uiServer{echo: e, ln: ln, cfg: provider}, nil
}

// serve answers until stop; it returns nil once stopped.
func (s *uiServer) serve() error {
	err := s.echo.StartServer(&http.Server{ReadHeaderTimeout: 10 * time.Second})
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func (s *uiServer) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.echo.Shutdown(ctx); err != nil {
		_ = s.echo.Close()
	}
	s.cfg.Close()
}

// uiGuard refuses a request whose Host is not this machine's, or that
// carries neither the UI token's cookie nor the token itself. A request
// that carries the token in its query (?token=, the link `horizon ui`
// prints) gets the cookie and is sent on to the same address without it,
// so the token does not stay in the address bar or the history.
func uiGuard(listenIP, token string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if !ownHost(r.Host, listenIP) {
				return c.String(http.StatusMisdirectedRequest, "the horizon Web UI answers only on 127.0.0.1\n")
			}
			if q := r.URL.Query().Get("token"); q != "" {
				if !sameToken(q, token) {
					return c.String(http.StatusUnauthorized, uiRefusal)
				}
				c.SetCookie(&http.Cookie{Name: UICookie, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
				u := *r.URL
				v := u.Query()
				v.Del("token")
				u.RawQuery = v.Encode()
				return c.Redirect(http.StatusSeeOther, u.RequestURI())
			}
			if ck, err := r.Cookie(UICookie); err == nil && sameToken(ck.Value, token) {
				return next(c)
			}
			return c.String(http.StatusUnauthorized, uiRefusal)
		}
	}
}

const uiRefusal = "the horizon Web UI needs its token: open the link `horizon ui` prints (the token is in $HORIZON_HOME/" + UITokenFile + ")\n"

func sameToken(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(want)) == 1
}

// ownHost reports whether a request's Host names this machine: a loopback
// name, or the address the UI listens on when that is not loopback.
func ownHost(hostport, listenIP string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	if ip.IsLoopback() {
		return true
	}
	l := net.ParseIP(listenIP)
	return l != nil && !l.IsUnspecified() && l.Equal(ip)
}
